// A local Prometheus for the snapshot and the tests, started by the very script `npm run up`
// uses (scripts/prometheus.sh), in a temporary directory: same configuration, same rules.
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'prometheus.sh')
const run = promisify(execFile)

export interface LocalPrometheus {
  url: string
  /** the directory of its configuration, data and log */
  dir: string
  stop(): Promise<void>
}

export async function startLocalPrometheus(opts: { port: number; target: string; interval: string }): Promise<LocalPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'meterline-prom-'))
  const env = { ...process.env, PROMETHEUS_PORT: String(opts.port) }
  const args = ['--dir', dir, '--target', opts.target, '--interval', opts.interval]
  await run('bash', [SCRIPT, 'start', ...args], { env })
  return {
    url: `http://127.0.0.1:${opts.port}`,
    dir,
    async stop() {
      await run('bash', [SCRIPT, 'stop', '--dir', dir], { env })
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Writes the configuration `npm run up` uses (nothing started); returns its path. */
export async function writeLocalPrometheusConfig(opts: { target: string; interval: string }): Promise<{ file: string; cleanup(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'meterline-prom-'))
  const { stdout } = await run('bash', [SCRIPT, 'config', '--dir', dir, '--target', opts.target, '--interval', opts.interval])
  return { file: stdout.trim(), cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}
