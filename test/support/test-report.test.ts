// `npm test` runs each file in a child process with --test-force-exit; the child sends its report to
// the runner as v8-serialized frames on stdout. Node's force exit calls process.exit() as soon as its
// reporter closes, before the last frames reach stdout (nodejs/node#64833): under load the runner then
// counts fewer tests than ran. This runs a file the way the runner does, with the flags this process
// was started with (scripts/test.sh's), and reads every frame back.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deserialize } from 'node:v8'

const CASES = 500

type Frame = { type: string; data: { name?: string; message?: string } }

/** The runner's frame: a v8 header (2 bytes), the payload's length (4 bytes, big-endian), the payload. */
function frames(report: Buffer): Frame[] {
  const out: Frame[] = []
  let at = 0
  while (at + 6 <= report.length) {
    const length = report.readUInt32BE(at + 2)
    const end = at + 6 + length
    if (end > report.length) break
    out.push(deserialize(report.subarray(at + 6, end)) as Frame)
    at = end
  }
  return out
}

test('a file run with --test-force-exit reports every test and its closing summary to the runner', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'meterline-report-'))
  try {
    const file = join(dir, 'many.test.cjs')
    writeFileSync(file, `const { test } = require('node:test')\nfor (let i = 0; i < ${CASES}; i++) test('case ' + i, () => {})\n`)
    const child = spawn(process.execPath, [...process.execArgv, '--test-force-exit', file], {
      env: { ...process.env, NODE_TEST_CONTEXT: 'child-v8' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const chunks: Buffer[] = []
    child.stdout.on('data', (c: Buffer) => chunks.push(c))
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    assert.equal(code, 0)
    const report = frames(Buffer.concat(chunks))
    assert.equal(report.filter((f) => f.type === 'test:pass').length, CASES)
    // the summary's last line is the runner's duration: the report's last frame
    const last = report.at(-1)
    assert.equal(last?.type, 'test:diagnostic')
    assert.match(last?.data.message ?? '', /^duration_ms /, `the report ends at ${JSON.stringify(last)}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
