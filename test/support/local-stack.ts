// The platform exactly as `npm run up` starts it (scripts/up.sh: its own Postgres, Redis and
// Kafka-protocol broker, then the processes topology or the all-in-one), in a private data directory and on its
// own ports, for the fault tests: they kill and restart its pieces like an operator would.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PROJECT_ROOT } from '../../platform/config.js'
import { readTopology } from '../../platform/topology-file.js'
import { stopOnTestTimeout } from './stop-on-test-timeout.js'

export interface LocalStack {
  dataDir: string
  url: string
  env: NodeJS.ProcessEnv
  /** `npm run up`; resolves once /health answers, with the time that took (at once with wait: false) */
  up(opts?: { wait?: boolean }): Promise<{ ms: number }>
  /** what the platform wrote to its standard output (its log) since this stack was created */
  log(): string
  /** the demo tenant `up` created */
  demo(): { tenantId: string; apiKey: string }
  /** kill -9 of the platform process; resolves when up.sh has returned and the topology's roles have stopped */
  killApp(): Promise<void>
  /** SIGTERM to the platform alone (the stack keeps running); resolves when it exited */
  stopApp(): Promise<void>
  appPid(): number | undefined
  brokerPid(): number | undefined
  /** kill -9 of the broker, then `scripts/stack.sh start` brings it back on the same port */
  restartBroker(): Promise<void>
  /** `npm run down`; resolves with its output and duration */
  down(): Promise<{ ms: number; output: string }>
  /** `npm run usage:verify` for a tenant (run it while the platform is stopped) */
  verify(tenantId: string): { status: number; output: string }
  status(): string
  /** everything down and the data directory removed */
  destroy(): Promise<void>
}

const pick = (base: number) => base + Math.floor(Math.random() * 900)

export function createLocalStack(extraEnv: Record<string, string> = {}): LocalStack {
  const dataDir = mkdtempSync(join(tmpdir(), 'meterline-faults-'))
  chmodSync(dataDir, 0o755) // the postgres user must reach its data directory inside
  const port = pick(28100)
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    METERLINE_DATA_DIR: dataDir,
    PG_PORT: String(pick(25100)),
    REDIS_PORT: String(pick(26100)),
    KAFKA_PORT: String(pick(27100)),
    PORT: String(port),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    PG_DB_NAMES: 'meterline',
    PROMETHEUS_PORT: '0',
    CLICKHOUSE_ENDPOINT_PORT: String(pick(29100)),
    ...extraEnv,
  }
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'KAFKA_BROKERS', 'CHDB_PATH', 'SPOOL_DIR', 'REDIS_PREFIX', 'KAFKA_EVENTS_TOPIC']) delete env[name]
  const url = `http://127.0.0.1:${port}`
  const forget = stopOnTestTimeout(env)
  let upProcess: ChildProcess | undefined
  let output = ''
  let upExited: Promise<void> = Promise.resolve()

  const readPid = (file: string) => {
    try {
      const pid = Number(readFileSync(join(dataDir, file), 'utf8').trim())
      process.kill(pid, 0)
      return pid
    } catch {
      return undefined
    }
  }
  const run = (args: string[]) => spawnSync('bash', args, { cwd: PROJECT_ROOT, env, encoding: 'utf8', timeout: 120_000 })

  async function healthy(deadline: number): Promise<void> {
    for (;;) {
      try {
        const res = await fetch(`${url}/health`)
        if (res.ok) return
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`the platform did not answer /health (see ${dataDir})`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  async function waitExit(pid: number | undefined, ms: number) {
    const deadline = Date.now() + ms
    while (pid && Date.now() < deadline) {
      try {
        process.kill(pid, 0)
      } catch {
        return
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  const stack: LocalStack = {
    dataDir,
    url,
    env,
    async up({ wait = true } = {}) {
      const t0 = Date.now()
      const child = spawn('bash', ['scripts/up.sh'], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] })
      // Kept (the last 4 MB) for the tests that read the log; read so the pipe never fills.
      child.stdout?.on('data', (chunk: Buffer) => {
        output = (output + chunk.toString('utf8')).slice(-4 * 2 ** 20)
      })
      upProcess = child
      upExited = new Promise((resolve) => child.once('exit', () => resolve()))
      if (!wait) return { ms: 0 }
      await healthy(Date.now() + 180_000)
      const ms = Date.now() - t0
      // The demo tenant is created right after the server listens.
      const deadline = Date.now() + 30_000
      while (!existsSync(join(dataDir, 'demo.json')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      return { ms }
    },
    log: () => output,
    demo() {
      return JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'))
    },
    appPid: () => readPid('platform.pid'),
    brokerPid: () => readPid('kafka/kafka-mock.pid'),
    async killApp() {
      const pid = stack.appPid()
      // the processes topology: its roles stop themselves once their supervisor is gone
      const roles = (readTopology(dataDir) ?? []).flatMap((r) => (r.pid ? [r.pid] : []))
      if (pid) process.kill(pid, 'SIGKILL')
      await upExited
      for (const role of roles) await waitExit(role, 30_000)
    },
    async stopApp() {
      const pid = stack.appPid()
      if (pid) process.kill(pid, 'SIGTERM')
      await waitExit(pid, 30_000)
      await upExited
    },
    async restartBroker() {
      const pid = stack.brokerPid()
      if (pid) process.kill(pid, 'SIGKILL')
      await waitExit(pid, 5000)
      const r = run(['scripts/stack.sh', 'start'])
      if (r.status !== 0) throw new Error(`stack.sh start failed: ${r.stderr}`)
    },
    async down() {
      const t0 = Date.now()
      const child = spawn('bash', ['scripts/down.sh'], { cwd: PROJECT_ROOT, env })
      let output = ''
      child.stdout.on('data', (d) => (output += d))
      child.stderr.on('data', (d) => (output += d))
      await new Promise((resolve) => child.once('exit', resolve))
      const ms = Date.now() - t0
      await upExited
      return { ms, output }
    },
    verify(tenantId) {
      const r = spawnSync('bash', ['-c', 'eval "$(bash scripts/stack.sh env)" && node --import tsx scripts/verify-usage.ts --tenant "$0"', tenantId], {
        cwd: PROJECT_ROOT, env, encoding: 'utf8', timeout: 120_000,
      })
      return { status: r.status ?? -1, output: `${r.stdout}${r.stderr}` }
    },
    status: () => run(['scripts/stack.sh', 'status']).stdout,
    async destroy() {
      await stack.down().catch(() => undefined)
      forget()
      upProcess?.kill('SIGKILL')
      if (existsSync(dataDir)) rmSync(dataDir, { recursive: true, force: true })
    },
  }
  return stack
}
