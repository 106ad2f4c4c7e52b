// Runs each role as its own process and keeps it running: a role that dies is started again
// (after 1 s, doubling to 10 s while it keeps dying) and the log says so. The state of every
// process is written to `topology.json` in the data directory (the health route reads it).
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { writeTopology, type ProcessState } from '../../platform/topology-file.js'
import type { Role } from './roles.js'

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url))
const START_ATTEMPTS = 3
const FLOW: Role['kind'][] = ['clickhouse-endpoint', 'ingest', 'aggregator', 'billing-api', 'scheduler']

interface Supervised {
  role: Role
  child?: ChildProcess
  state: ProcessState
  stopping: boolean
  timer?: NodeJS.Timeout
}

export class Supervisor {
  private readonly procs = new Map<string, Supervised>()

  constructor(
    private readonly opts: { dataDir: string; env: Record<string, string | undefined>; log: (msg: string) => void },
  ) {}

  /**
   * Starts a role and waits until it answers on its port. A role that exits while starting is
   * started again like any other (a broker or database not answering yet); after
   * START_ATTEMPTS the start fails.
   */
  async start(role: Role, readyPath = '/health'): Promise<void> {
    const p: Supervised = { role, stopping: false, state: { name: role.name, kind: role.kind, port: role.port, state: 'starting', restarts: 0 } }
    this.procs.set(role.name, p)
    this.spawn(p)
    for (;;) {
      const child = p.child
      try {
        return await this.ready(p, readyPath)
      } catch (err) {
        if (p.stopping || p.state.restarts + 1 >= START_ATTEMPTS) throw err
        // the exit handler starts it again after its backoff
        while (p.child === child && !p.stopping) await new Promise((r) => setTimeout(r, 100))
      }
    }
  }

  /** in the order data flows (whichever started first) */
  states(): ProcessState[] {
    const rank = (p: Supervised) => FLOW.indexOf(p.role.kind) * 1000 + (Number(/-(\d+)$/.exec(p.role.name)?.[1]) || 0)
    return [...this.procs.values()].sort((a, b) => rank(a) - rank(b)).map((p) => ({ ...p.state }))
  }

  /** Stops the named roles together (SIGTERM, then SIGKILL after `graceMs`). */
  async stop(names: string[], graceMs: number): Promise<void> {
    await Promise.all(names.map(async (name) => {
      const p = this.procs.get(name)
      if (!p) return
      p.stopping = true
      clearTimeout(p.timer)
      const child = p.child
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit')
        child.kill('SIGTERM')
        const kill = setTimeout(() => {
          this.opts.log(`${name} did not stop in ${graceMs} ms; killing it`)
          child.kill('SIGKILL')
        }, graceMs)
        await exited
        clearTimeout(kill)
      }
      p.state.state = 'stopped'
      this.write()
    }))
  }

  /** Stops the named roles and forgets them (an aggregator process the operator no longer wants). */
  async remove(names: string[], graceMs: number): Promise<void> {
    await this.stop(names, graceMs)
    for (const name of names) this.procs.delete(name)
    this.write()
  }

  names(): string[] {
    return [...this.procs.keys()]
  }

  private spawn(p: Supervised): void {
    const child = spawn(process.execPath, [...profilingFlags(), ...p.role.args], {
      cwd: PROJECT_ROOT, env: { ...process.env, ...this.opts.env, ...p.role.env }, stdio: ['ignore', 'pipe', 'pipe'],
    })
    p.child = child
    p.state.pid = child.pid
    p.state.startedAt = new Date().toISOString()
    const prefix = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream) => {
      let rest = ''
      stream.on('data', (chunk: Buffer) => {
        const lines = (rest + chunk.toString('utf8')).split('\n')
        rest = lines.pop() ?? ''
        for (const line of lines) out.write(`[${p.role.name}] ${line}\n`)
      })
    }
    prefix(child.stdout!, process.stdout)
    prefix(child.stderr!, process.stderr)
    child.once('exit', (code, signal) => {
      p.state.lastExit = `${new Date().toISOString()} ${signal ? `signal ${signal}` : `code ${code}`}`
      if (p.stopping) return
      const wait = Math.min(1000 * 2 ** Math.min(p.state.restarts, 4), 10_000)
      p.state.state = 'restarting'
      this.opts.log(`${p.role.name} (pid ${child.pid}) exited (${signal ? `signal ${signal}` : `code ${code}`}); starting it again in ${wait} ms`)
      this.write()
      p.timer = setTimeout(() => {
        if (p.stopping) return
        p.state.restarts++
        this.spawn(p)
        void this.ready(p, p.role.kind === 'clickhouse-endpoint' ? '/ping' : '/health').then(
          () => this.opts.log(`${p.role.name} is running again (pid ${p.child?.pid}, restart ${p.state.restarts})`),
          () => undefined,
        )
      }, wait)
    })
    this.write()
  }

  private async ready(p: Supervised, path: string): Promise<void> {
    const child = p.child!
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${p.role.name} exited while starting`)
      try {
        const res = await fetch(`http://127.0.0.1:${p.role.port}${path}`)
        if (res.ok) break
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100))
    }
    if (p.child === child) {
      p.state.state = 'running'
      this.write()
    }
  }

  private write(): void {
    writeTopology(this.opts.dataDir, this.states())
  }
}

/** `--cpu-prof` given to the supervisor profiles every role too (each writes its own profile there). */
function profilingFlags(): string[] {
  return process.execArgv.filter((a) => /^--cpu-prof(-dir|-interval)?(=|$)/.test(a))
}
