// A file the runner ends with SIGTERM (it ran past --test-timeout) stops the platform it started:
// the platform, its Postgres, Redis and broker do not outlive it to slow the files after it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { PROJECT_ROOT } from '../../platform/config.js'
import { processAlive } from '../../platform/process-alive.js'


test('SIGTERM to a test file stops the platform it started with npm run up, and the stack under it', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/stack-until-sigterm.ts'], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  const started = await new Promise<Record<string, number>>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      const line = /^started (.*)$/m.exec(out)
      if (line) resolve(JSON.parse(line[1]) as Record<string, number>)
    })
    child.once('exit', (code) => reject(new Error(`the fixture exited (${code}) before it started: ${out}`)))
  })
  for (const [name, pid] of Object.entries(started)) assert.ok(pid > 0 && processAlive(pid), `${name} is running`)
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  child.kill('SIGTERM')
  assert.equal(await exited, 143)
  // up.sh, told to stop by npm run down, may still be finishing its own stop of the stack
  for (const deadline = Date.now() + 30_000; Object.values(started).some(processAlive) && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 200))
  assert.deepEqual(Object.entries(started).filter(([, pid]) => processAlive(pid)).map(([name]) => name), [], 'still running after the file ended')
})
