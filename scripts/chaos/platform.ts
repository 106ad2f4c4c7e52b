// The platform under chaos, driven the way an operator drives it: `npm run up` (scripts/up.sh),
// kill -9 of the platform process, `npm run down`, scripts/stack.sh for the broker, Postgres and
// Redis, the admin API for the aggregator consumers. Every command gets the same environment
// (METERLINE_DATA_DIR, PORT, PG_PORT, REDIS_PORT, KAFKA_PORT), so a private stack stays private.
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { PROJECT_ROOT } from '../../platform/config.js'
import { readTopology, type RoleKind } from '../../platform/topology-file.js'
import { processAlive } from '../../platform/process-alive.js'

export interface CommandResult {
  status: number
  output: string
  ms: number
}

export interface ChaosPlatform {
  url: string
  dataDir: string
  env: NodeJS.ProcessEnv
  healthy(): Promise<boolean>
  /** `npm run up`; resolves once /health answers and the demo tenant exists */
  up(): Promise<number>
  /** kill -9 of the platform process; resolves once up.sh returned */
  kill9(): Promise<void>
  /** `npm run down` (the platform drains, then the stack stops) */
  down(): Promise<CommandResult>
  stack(command: 'restart-kafka' | 'stop-postgres' | 'start-postgres' | 'stop-redis' | 'start-redis' | 'start' | 'stop'): Promise<CommandResult>
  /** `npm run usage:verify -- --tenant T` (the platform must be stopped) */
  verify(tenantId: string): Promise<CommandResult>
  demo(): { tenantId: string; apiKey: string }
  adminToken(): string
  lastStop(): string
  /** exits of the platform nobody asked for (a crash), with their status, since the last call */
  takeCrashes(): string[]
  /** the processes topology: sends `signal` to one running process of `kind` (the last started); which one, or undefined */
  signalRole(kind: RoleKind, signal: NodeJS.Signals): { name: string; pid: number } | undefined
  /** the processes topology: resolves once every role runs again (after a role was killed) */
  rolesRunning(timeoutMs: number): Promise<void>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
/** waits for `p`, at most `ms` (the timer does not keep the process alive) */
const within = (p: Promise<void>, ms: number) => Promise.race([p, new Promise((r) => setTimeout(r, ms).unref())])

/** what the platform's commands share: where it lives, and whether up.sh's exit was asked for */
interface PlatformState {
  env: NodeJS.ProcessEnv
  dataDir: string
  url: string
  logFile: string
  /** resolves once the last up.sh started exited */
  upExited: Promise<void>
  /** a kill -9 or a down was asked for: up.sh's exit is not a crash */
  expectExit: boolean
  /** exits of up.sh nobody asked for, not yet taken */
  crashes: string[]
}

export function chaosPlatform(env: NodeJS.ProcessEnv): ChaosPlatform {
  const dataDir = env.METERLINE_DATA_DIR ?? join(PROJECT_ROOT, '.data')
  const url = `http://127.0.0.1:${env.PORT ?? '8080'}`
  const s: PlatformState = { env, dataDir, url, logFile: join(dataDir, 'chaos-platform.log'), upExited: Promise.resolve(), expectExit: false, crashes: [] }
  return {
    url,
    dataDir,
    env,
    healthy: () => healthy(url),
    up: () => up(s),
    kill9: () => kill9(s),
    down: () => down(s),
    stack: (command) => runCommand(s, ['bash', 'scripts/stack.sh', command]),
    verify: (tenantId) => runCommand(s, ['npm', 'run', '--silent', 'usage:verify', '--', '--tenant', tenantId], 300_000),
    demo: () => JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as { tenantId: string; apiKey: string },
    adminToken: () => env.ADMIN_TOKEN ?? readFileSync(join(dataDir, 'admin-token'), 'utf8').trim(),
    takeCrashes: () => s.crashes.splice(0),
    signalRole: (kind, signal) => signalRole(dataDir, kind, signal),
    rolesRunning: (timeoutMs) => rolesRunning(dataDir, timeoutMs),
    lastStop: () => (existsSync(join(dataDir, 'last-stop.txt')) ? readFileSync(join(dataDir, 'last-stop.txt'), 'utf8').trim() : ''),
  }
}

/** the live pid in `file` of the data directory, or undefined */
function readPid(s: PlatformState, file: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(s.dataDir, file), 'utf8').trim())
    process.kill(pid, 0)
    return pid
  } catch {
    return undefined
  }
}

/** a command whose output goes to the platform log (and is returned) */
function runCommand(s: PlatformState, args: string[], timeoutMs = 180_000): Promise<CommandResult> {
  const t0 = Date.now()
  return new Promise((resolve) => {
    const child = spawn(args[0], args.slice(1), { cwd: PROJECT_ROOT, env: s.env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ status: code ?? -1, output, ms: Date.now() - t0 })
    })
  })
}

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) })
    await res.arrayBuffer()
    return res.ok
  } catch {
    return false
  }
}

/** `npm run up`; resolves once /health answers and the demo tenant exists, with the time it took */
async function up(s: PlatformState): Promise<number> {
  const t0 = Date.now()
  const script = startUpScript(s)
  await waitServing(s, script)
  return Date.now() - t0
}

/** scripts/up.sh in the background, its output appended to the platform log; an exit nobody asked for is a crash */
function startUpScript(s: PlatformState): { exited: boolean } {
  mkdirSync(s.dataDir, { recursive: true })
  const fd = openSync(s.logFile, 'a')
  const child: ChildProcess = spawn('bash', ['scripts/up.sh'], { cwd: PROJECT_ROOT, env: s.env, stdio: ['ignore', fd, fd] })
  closeSync(fd)
  const script = { exited: false }
  s.expectExit = false
  s.upExited = new Promise((resolve) =>
    child.once('exit', (code) => {
      script.exited = true
      if (!s.expectExit) s.crashes.push(`up.sh exited with status ${code} (see ${s.logFile})`)
      resolve()
    }),
  )
  return script
}

/** until /health answers and demo.json exists; fails when up.sh exited first or after 180 s */
async function waitServing(s: PlatformState, script: { exited: boolean }): Promise<void> {
  const deadline = Date.now() + 180_000
  while (!(await healthy(s.url)) || !existsSync(join(s.dataDir, 'demo.json'))) {
    if (script.exited) throw new Error(`npm run up exited before the platform served (see ${s.logFile})`)
    if (Date.now() > deadline) throw new Error(`the platform did not answer /health within 180 s (see ${s.logFile})`)
    await sleep(100)
  }
}

/** kill -9 of the platform process; resolves once up.sh returned and the process (and its roles) are gone */
async function kill9(s: PlatformState): Promise<void> {
  const pid = readPid(s, 'platform.pid')
  // the processes topology: its roles stop themselves once their supervisor is gone
  const roles = (readTopology(s.dataDir) ?? []).flatMap((r) => (r.pid ? [r.pid] : []))
  s.expectExit = true
  if (pid) process.kill(pid, 'SIGKILL')
  await within(s.upExited, 10_000)
  // up.sh removes the pid file when its wait returns; wait for the process to be gone too
  for (let i = 0; i < 100 && pid && readPid(s, 'platform.pid') === pid; i++) await sleep(50)
  for (let i = 0; i < 600 && roles.some(processAlive); i++) await sleep(50)
}

/** `npm run down` (the platform drains, then the stack stops); waits for up.sh to return */
async function down(s: PlatformState): Promise<CommandResult> {
  s.expectExit = true
  const r = await runCommand(s, ['bash', 'scripts/down.sh'])
  await within(s.upExited, 30_000)
  return r
}

function signalRole(dataDir: string, kind: RoleKind, signal: NodeJS.Signals): { name: string; pid: number } | undefined {
  const target = (readTopology(dataDir) ?? []).filter((r) => r.kind === kind && r.state === 'running' && r.pid).at(-1)
  if (!target?.pid) return undefined
  process.kill(target.pid, signal)
  return { name: target.name, pid: target.pid }
}

async function rolesRunning(dataDir: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  await sleep(300) // the supervisor writes the exit first
  while ((readTopology(dataDir) ?? []).some((r) => r.state !== 'running')) {
    if (Date.now() > deadline) throw new Error(`a role did not run again within ${timeoutMs} ms: ${JSON.stringify(readTopology(dataDir))}`)
    await sleep(200)
  }
}
