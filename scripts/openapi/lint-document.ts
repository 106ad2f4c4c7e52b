// `npm run lint` (last step): the OpenAPI document of the current routes, built in this process
// like the client generator does (no service needed), linted by Redocly's CLI with the rules of
// redocly.yaml. Exits non-zero on any error; warnings are listed in a summary.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildOpenApiDocument } from './build-document.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const REDOCLY = join(ROOT, 'node_modules', '.bin', 'redocly')

const dir = mkdtempSync(join(tmpdir(), 'meterline-openapi-'))
try {
  const file = join(dir, 'openapi.json')
  writeFileSync(file, JSON.stringify(await buildOpenApiDocument(), null, 2))
  const run = spawnSync(REDOCLY, ['lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'summary'], {
    stdio: 'inherit',
    // No network beyond npm: no telemetry, no update check.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  })
  if (run.error) throw run.error
  process.exitCode = run.status ?? 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
