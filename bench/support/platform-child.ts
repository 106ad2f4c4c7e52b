// The platform as a child process of a bench, as `npm run up` runs it: the all-in-one process
// (scripts/all-in-one.ts) or the processes topology (scripts/platform-processes.ts, every role
// its own process: billing-api on `port`, ingest on port + 1, the ClickHouse endpoint on
// port + 50, aggregator i on port + 10 + i). Its own data directory, topic, consumer group and
// Redis prefix against the running stack, the demo tenant's API key read from its banner, and
// the CPU seconds and RSS of each of its processes from /proc. Used by bench/steady.ts and
// bench/entitlement-check.ts.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { Config } from '../../platform/config.js'
import { readTopology } from '../../platform/topology-file.js'

export type Topology = 'all-in-one' | 'processes'

export interface PlatformProcess { name: string; pid: number; port: number; kind: string }

export interface PlatformChild {
  child: ChildProcess
  /** billing-api's base URL, and ingest's (the same in the all-in-one process) */
  apiUrl: string
  ingestUrl: string
  /** the demo tenant's API key */
  key: string
  adminToken: string
  /** the platform's processes: the one all-in-one process, or the running roles topology.json lists */
  processes: () => PlatformProcess[]
  /** SIGTERM, then waits for the exit (the processes topology drains and stops every role) */
  stop(): Promise<void>
}

export interface PlatformChildOptions {
  topology: Topology
  /** the stack's settings (databaseUrl, redisUrl, kafkaBrokers, dataDir, eventsPartitions) */
  config: Config
  /** the platform's data directory */
  dir: string
  /** false: keep what the directory holds (steady --keep) */
  fresh: boolean
  port: number
  /** names the topic (events-bench-<id>), consumer group and Redis prefix (bench-<id>) */
  id: string
  /** node arguments before the entry (--cpu-prof) */
  execArgv?: string[]
  /** more environment for the platform (rate limits) */
  env?: Record<string, string>
  /** how long to wait for the demo key in its banner (default 180 s: the processes topology starts its aggregators one after another) */
  startTimeoutMs?: number
}

export function parseTopology(value: string | undefined): Topology {
  if (value === undefined || value === 'all-in-one' || value === 'processes') return value ?? 'all-in-one'
  throw new Error(`--topology is all-in-one or processes, got ${value}`)
}

export async function startPlatformChild(opts: PlatformChildOptions): Promise<PlatformChild> {
  const { config, dir, port, id } = opts
  const processes = opts.topology === 'processes'
  if (opts.fresh) rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const topic = `events-bench-${id}`
  // The local broker creates topics on first use with 4 partitions; this one needs KAFKA_EVENTS_PARTITIONS.
  writeFileSync(join(config.dataDir, 'kafka', 'control'), `topic ${topic} ${config.eventsPartitions}\n`)
  await new Promise((r) => setTimeout(r, 500))
  const adminToken = `bench-admin-token-${id}-${randomBytes(8).toString('hex')}`
  const entry = processes ? 'scripts/platform-processes.ts' : 'scripts/all-in-one.ts'
  const child = spawn(process.execPath, [...(opts.execArgv ?? []), '--import', 'tsx', entry, '--demo'], {
    env: {
      ...process.env, METERLINE_DATA_DIR: dir, PORT: String(port), CLICKHOUSE_ENDPOINT_PORT: String(port + 50), KAFKA_BROKERS: config.kafkaBrokers.join(','),
      DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, KAFKA_EVENTS_TOPIC: topic, KAFKA_AGGREGATOR_GROUP: `bench-${id}`,
      REDIS_PREFIX: `bench-${id}`, ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGTERM')
    await exited
  }
  const key = await demoKey(child, opts.startTimeoutMs ?? 180_000).catch(async (err: unknown) => {
    await stop()
    throw err
  })
  return {
    child, key, adminToken, stop,
    apiUrl: `http://127.0.0.1:${port}`,
    // The processes topology serves ingest one port above billing-api.
    ingestUrl: `http://127.0.0.1:${processes ? port + 1 : port}`,
    processes: () => processes
      ? (readTopology(dir) ?? []).flatMap((p) => (p.pid === undefined ? [] : [{ ...p, pid: p.pid }]))
      : [{ name: 'all-in-one', pid: child.pid!, port, kind: 'all-in-one' }],
  }
}

/** The demo tenant's key from the platform's banner ("API key: ..."), once it serves. */
async function demoKey(child: ChildProcess, timeoutMs: number): Promise<string> {
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  for (let i = 0; !/API key: (\S+)/.test(out); i++) {
    if (i > timeoutMs / 100 || child.exitCode !== null) throw new Error(`the platform did not start:\n${out}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  return /API key: (\S+)/.exec(out)![1]
}

export const rssOfPid = (pid: number): number => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
  } catch {
    return 0
  }
}

/** CPU seconds (user + system, every thread: JS and the embedded engine) a process used */
export const cpuOfPid = (pid: number): number => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(f[11]) + Number(f[12])) / 100 // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return 0
  }
}

export const cpuByProcess = (processes: PlatformProcess[]): Map<string, number> => new Map(processes.map((p) => [p.name, cpuOfPid(p.pid)]))

/** The platform's peak RSS, in total and per process, sampled every 500 ms until stop(). */
export function rssPeaks(processes: () => PlatformProcess[]): { max: () => number; maxByProcess: Map<string, number>; stop: () => void } {
  const maxByProcess = new Map<string, number>()
  let max = 0
  const timer = setInterval(() => {
    let total = 0
    for (const p of processes()) {
      const rss = rssOfPid(p.pid)
      total += rss
      maxByProcess.set(p.name, Math.max(maxByProcess.get(p.name) ?? 0, rss))
    }
    max = Math.max(max, total)
  }, 500)
  return { max: () => max, maxByProcess, stop: () => clearInterval(timer) }
}

/** Each process's CPU seconds between two readings (cpuByProcess) and its peak RSS (rssPeaks) */
export function perProcessFigures(before: Map<string, number>, after: Map<string, number>, maxRss: Map<string, number>): { name: string; cpuSeconds: number; rssMaxMiB: number }[] {
  return [...maxRss.keys()].map((name) => ({ name, cpuSeconds: (after.get(name) ?? 0) - (before.get(name) ?? 0), rssMaxMiB: (maxRss.get(name) ?? 0) / 1024 ** 2 }))
}

/** `name 1.2 s / 345 MiB, ...` */
export const perProcessText = (figures: ReturnType<typeof perProcessFigures>): string =>
  figures.map((f) => `${f.name} ${f.cpuSeconds.toFixed(1)} s / ${f.rssMaxMiB.toFixed(0)} MiB`).join(', ')
