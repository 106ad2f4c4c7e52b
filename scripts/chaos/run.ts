// One chaos run: the platform up, an audit meter, the client streaming while the seeded fault
// schedule runs, then the catch-up wait, the per-event audit through the usage API,
// `npm run down` and `npm run usage:verify`. Used by `npm run chaos` and test/chaos/.
import { settingDefault } from '../../platform/settings.js'
import { auditCounts, meterTotal, perEventCounts, type AuditMeter, type MeterAudit, type Window } from './audit.js'
import { startChaosClient, type ChaosClient, type ClientOptions, type ClientStats } from './client.js'
import { failed, httpApi, type Api } from './http.js'
import { chaosPlatform, type ChaosPlatform, type CommandResult } from './platform.js'
import { faultSchedule, type Fault } from './schedule.js'

export interface ChaosOptions {
  seconds: number
  seed: number
  env: NodeJS.ProcessEnv
  /** scales the pauses between faults (1: 2-12 s) */
  pace?: number
  /** new events per second */
  rate?: number
  concurrency?: number
  /** stop after this many faults (the stream ends 3 s after the last one) */
  maxFaults?: number
  /** counts must be stable this long before the audit */
  settleMs?: number
  log?: (line: string) => void
}

export interface FaultRecord {
  kind: string
  atS: number
  ms: number
  note: string
}

export interface ChaosSummary {
  /** platform exits nobody caused (crashes), and when */
  crashes: string[]
  seed: number
  runId: string
  seconds: number
  faults: FaultRecord[]
  sent: number
  acknowledged: number
  client: ClientStats
  rejections: string[]
  meters: MeterAudit[]
  doubled: string[]
  lost: string[]
  unknown: string[]
  settleMs: number
  lastStop: string
  verify: { status: number; output: string }
  ok: boolean
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const CUSTOMERS = 8

/** what the run's steps share: the platform, its APIs, the run's names and its findings */
interface ChaosRun {
  opts: ChaosOptions
  log: (line: string) => void
  p: ChaosPlatform
  /** seconds since the run started, to a tenth */
  at: () => number
  runId: string
  eventName: string
  demo: { tenantId: string; apiKey: string }
  api: Api
  admin: Api
  window: Window
  /** platform exits nobody caused (crashes), and when */
  crashes: string[]
  /** the number of the next meter created */
  meterNo: number
}

/** the aggregator consumers (all-in-one) or processes (processes topology) a start runs; a join adds one */
interface Aggregators {
  processes: boolean
  base: number
}

/** how the fault loop ended: what ran, whether a joined aggregator is still in, when the stream ends */
interface FaultsRun {
  faults: FaultRecord[]
  joined: boolean
  streamEnd: number
}

export async function runChaos(opts: ChaosOptions): Promise<ChaosSummary> {
  const run = await startRun(opts)
  run.log(`[chaos] seed ${opts.seed}, run ${run.runId}, ${opts.seconds} s, tenant ${run.demo.tenantId}, event_name ${run.eventName}`)
  run.log(`[chaos] ${run.at()}s meter ${await createMeter(run, 'COUNT')}`)
  const client = startChaosClient(clientOptions(run))
  const aggregators = aggregatorsAtStart(opts.env)
  const faults = await injectFaults(run, aggregators)
  await stopStream(run, client, faults.streamEnd)
  if (faults.joined) run.log(`[chaos] ${run.at()}s the joined aggregator leaves: ${await setConsumers(run.admin, aggregators.base)}`)
  await recover(run)
  const audit = await auditEvents(run, client.events)
  const stopped = await stopPlatform(run)
  return summarize(run, faults.faults, client, audit, stopped)
}

/** the platform serving (`npm run up` when nothing serves), the run's names and its APIs */
async function startRun(opts: ChaosOptions): Promise<ChaosRun> {
  const log = opts.log ?? ((line: string) => console.log(line))
  const p = chaosPlatform(opts.env)
  const t0 = Date.now()
  const at = () => Math.round((Date.now() - t0) / 100) / 10
  const runId = `chaos-${opts.seed}-${Date.now().toString(36)}`
  const eventName = runId.replace(/-/g, '_')
  if (!(await p.healthy())) log(`[chaos] ${at()}s npm run up: serving after ${await p.up()} ms`)
  const demo = p.demo()
  const api = httpApi(p.url, { 'x-api-key': demo.apiKey })
  const admin = httpApi(p.url, { authorization: `Bearer ${p.adminToken()}` })
  const window: Window = { start: new Date(t0 - 3_600_000).toISOString(), end: new Date(t0 + 7 * 86_400_000).toISOString(), customers: CUSTOMERS }
  return { opts, log, p, at, runId, eventName, demo, api, admin, window, crashes: [], meterNo: 0 }
}

/** a platform that exited on its own is a finding; it is started again, as an operator would */
async function recover(run: ChaosRun): Promise<void> {
  const found = run.p.takeCrashes()
  if (found.length === 0) return
  for (const c of found) run.crashes.push(`${run.at()}s ${c}`)
  run.log(`[chaos] ${run.at()}s PLATFORM CRASHED (not injected): ${found.join('; ')}; npm run up: serving after ${await run.p.up()} ms`)
}

/** a meter on the run's event name, grouped by eid (retried for a minute while the platform is down) */
async function createMeter(run: ChaosRun, aggregation: 'COUNT' | 'SUM'): Promise<string> {
  const name = `${run.runId}-m${run.meterNo++}`
  const body = { name, event_name: run.eventName, aggregation: aggregation === 'COUNT' ? { type: 'COUNT', group_by: 'eid' } : { type: 'SUM', field: 'n', group_by: 'eid' } }
  for (let i = 0; ; i++) {
    const res = await run.api.post('/v1/meters', body).catch(failed)
    if (res.status === 201) return `${name} (${aggregation}) ${(res.body as { id: string }).id}`
    if (i >= 120) throw new Error(`could not create meter ${name}: ${res.status} ${JSON.stringify(res.body)}`)
    await sleep(500)
    await recover(run)
  }
}

function clientOptions(run: ChaosRun): ClientOptions {
  const { opts } = run
  return {
    url: run.p.url, apiKey: run.demo.apiKey, eventName: run.eventName, runId: run.runId, seed: opts.seed, rate: opts.rate ?? 100, concurrency: opts.concurrency ?? 3, customers: CUSTOMERS,
    hotWindowMs: Number(opts.env.AGGREGATOR_HOT_WINDOW_MINUTES ?? settingDefault('AGGREGATOR_HOT_WINDOW_MINUTES')) * 60_000,
  }
}

function aggregatorsAtStart(env: NodeJS.ProcessEnv): Aggregators {
  const processes = (env.PLATFORM_TOPOLOGY || settingDefault('PLATFORM_TOPOLOGY')) === 'processes'
  const base = Number(processes ? env.TOPOLOGY_AGGREGATORS || settingDefault('TOPOLOGY_AGGREGATORS') : env.AGGREGATOR_CONSUMERS || settingDefault('AGGREGATOR_CONSUMERS'))
  return { processes, base }
}

/** the seeded schedule, one fault after another, until the run's time or `maxFaults` is reached */
async function injectFaults(run: ChaosRun, aggregators: Aggregators): Promise<FaultsRun> {
  const { opts } = run
  const schedule = faultSchedule(opts.seed, opts.pace ?? 1, aggregators.processes)
  const end = Date.now() + opts.seconds * 1000
  const done: FaultsRun = { faults: [], joined: false, streamEnd: end }
  for (;;) {
    if (opts.maxFaults !== undefined && done.faults.length >= opts.maxFaults) {
      done.streamEnd = Math.min(end, Date.now() + 3000)
      break
    }
    const fault = schedule.next().value as Fault
    if (Date.now() + fault.gapMs >= end) break
    await sleep(fault.gapMs)
    await recover(run)
    const start = Date.now()
    const atS = run.at()
    const note = await inject(run, fault, aggregators.base)
    if (fault.kind === 'aggregator-join') done.joined = true
    if (fault.kind === 'aggregator-leave') done.joined = false
    const rec = { kind: fault.kind, atS, ms: Date.now() - start, note }
    done.faults.push(rec)
    run.log(`[chaos] ${atS}s fault ${done.faults.length}: ${rec.kind} (${rec.ms} ms) ${note}`)
  }
  return done
}

/** the client streams until `streamEnd`, then stops once every batch in flight got its answer */
async function stopStream(run: ChaosRun, client: ChaosClient, streamEnd: number): Promise<void> {
  await sleep(Math.max(0, streamEnd - Date.now()))
  await recover(run)
  await client.stop()
  await recover(run)
  run.log(`[chaos] ${run.at()}s stream stopped: ${client.events.size} events sent, ${[...client.events.values()].filter((e) => e.acked).length} acknowledged`)
}

/** once the platform caught up, every meter's count per event id against what the client sent */
async function auditEvents(run: ChaosRun, events: ChaosClient['events']): Promise<{ audits: MeterAudit[]; settleMs: number }> {
  const meters = await auditMeters(run.api, run.eventName)
  const settleMs = await settleCounts(run.p, run.api, meters, run.window, events, run.opts.settleMs ?? 10_000, run.log, run.at)
  const audits: MeterAudit[] = []
  for (const m of meters) {
    const a = auditCounts(m, events, await perEventCounts(run.api, m, run.window))
    audits.push(a)
    run.log(`[chaos] ${run.at()}s audit ${m.name} (${m.aggregation} ${m.id}): counted ${a.counted}, total ${a.total}, doubled ${a.doubled.length}, lost ${a.lost.length}, unacknowledged counted ${a.unackedCounted}`)
  }
  return { audits, settleMs }
}

/** `npm run down`, `npm run usage:verify` on the stopped platform, then the stack stopped */
async function stopPlatform(run: ChaosRun): Promise<{ lastStop: string; verify: CommandResult }> {
  const down = await run.p.down()
  const lastStop = run.p.lastStop()
  run.log(`[chaos] ${run.at()}s npm run down (${down.ms} ms): ${lastStop}`)
  const verify = await run.p.verify(run.demo.tenantId)
  run.log(`[chaos] ${run.at()}s usage:verify exit ${verify.status}: ${verify.output.trim().split('\n').at(-1)}`)
  await run.p.stack('stop')
  return { lastStop, verify }
}

function summarize(
  run: ChaosRun, faults: FaultRecord[], client: ChaosClient, audit: { audits: MeterAudit[]; settleMs: number }, stopped: { lastStop: string; verify: CommandResult },
): ChaosSummary {
  const events = [...client.events.values()]
  const union = (pick: (a: MeterAudit) => string[]) => [...new Set(audit.audits.flatMap(pick))]
  const { verify } = stopped
  const summary: ChaosSummary = {
    seed: run.opts.seed,
    crashes: run.crashes,
    runId: run.runId,
    seconds: run.opts.seconds,
    faults,
    sent: events.length,
    acknowledged: events.filter((e) => e.acked).length,
    client: client.stats,
    rejections: client.rejections,
    meters: audit.audits,
    doubled: union((a) => a.doubled),
    lost: union((a) => a.lost),
    unknown: union((a) => a.unknown),
    settleMs: audit.settleMs,
    lastStop: stopped.lastStop,
    verify: { status: verify.status, output: verify.output },
    ok: false,
  }
  summary.ok = summary.doubled.length === 0 && summary.lost.length === 0 && summary.unknown.length === 0 && verify.status === 0 && client.rejections.length === 0
  return summary
}

async function setConsumers(admin: Api, n: number): Promise<string> {
  for (let i = 0; ; i++) {
    const res = await admin.put('/v1/admin/aggregators', { consumers: n }).catch(failed)
    if (res.status === 200) return `consumers ${(res.body as { items: { name: string; partitions: number[] }[] }).items.map((c) => `${c.name}[${c.partitions.length} partitions]`).join(' ')}`
    if (i >= 20) return `PUT consumers ${n} failed: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`
    await sleep(500)
  }
}

async function inject(run: ChaosRun, fault: Fault, base: number): Promise<string> {
  const { p } = run
  const stack = async (cmd: Parameters<ChaosPlatform['stack']>[0]) => {
    const r = await p.stack(cmd)
    if (r.status !== 0) throw new Error(`stack.sh ${cmd} failed (${r.status}): ${r.output}`)
    return r.ms
  }
  switch (fault.kind) {
    case 'kill9': {
      await p.kill9()
      await sleep(fault.holdMs)
      return `down ${fault.holdMs} ms; up serving after ${await p.up()} ms`
    }
    case 'down-up': {
      const down = await p.down()
      const stop = p.lastStop().replace(/^\S+ /, '')
      await sleep(fault.holdMs)
      return `down ${down.ms} ms (${stop}); up serving after ${await p.up()} ms`
    }
    case 'restart-kafka':
      return `broker back after ${await stack('restart-kafka')} ms`
    case 'postgres-stop': {
      const ms = await stack('stop-postgres')
      await sleep(fault.holdMs)
      return `stopped in ${ms} ms, down ${fault.holdMs} ms, started in ${await stack('start-postgres')} ms`
    }
    case 'redis-stop': {
      const ms = await stack('stop-redis')
      await sleep(fault.holdMs)
      return `stopped in ${ms} ms, down ${fault.holdMs} ms, started in ${await stack('start-redis')} ms`
    }
    case 'aggregator-join':
      return setConsumers(run.admin, base + 1)
    case 'aggregator-leave':
      return setConsumers(run.admin, base)
    case 'create-meter':
      return createMeter(run, fault.aggregation ?? 'COUNT')
    case 'aggregator-kill9':
    case 'endpoint-kill9': {
      // A role starting (after npm run up, a restart) is not running yet: wait for it.
      await p.rolesRunning(120_000)
      const killed = p.signalRole(fault.kind === 'endpoint-kill9' ? 'clickhouse-endpoint' : 'aggregator', 'SIGKILL')
      if (!killed) return 'no such process running: skipped'
      const t = Date.now()
      await p.rolesRunning(60_000)
      return `${killed.name} killed; running again after ${Date.now() - t} ms`
    }
    case 'aggregator-pause': {
      await p.rolesRunning(120_000)
      const paused = p.signalRole('aggregator', 'SIGSTOP')
      if (!paused) return 'no aggregator running: skipped'
      await sleep(fault.holdMs)
      process.kill(paused.pid, 'SIGCONT')
      return `${paused.name} stopped for ${fault.holdMs} ms, then continued`
    }
  }
}

/** every meter of the run's event name (a create retried after a lost answer may have made two) */
async function auditMeters(api: Api, eventName: string): Promise<AuditMeter[]> {
  const res = await api.get(`/v1/meters?event_name=${eventName}&limit=100`)
  if (res.status !== 200) throw new Error(`listing the meters: ${res.status} ${JSON.stringify(res.body)}`)
  return ((res.body as { items: unknown[] }).items as { id: string; name: string; aggregation: { type: 'COUNT' | 'SUM' } }[]).map((m) => ({ id: m.id, name: m.name, aggregation: m.aggregation.type }))
}

/** Prometheus text of every process (/platform/metrics): is every partition caught up and every spooled batch forwarded? */
async function caughtUp(url: string): Promise<boolean> {
  const text = await (await fetch(`${url}/platform/metrics`, { signal: AbortSignal.timeout(10_000) })).text()
  const values = (name: string) => text.split('\n').filter((l) => l.startsWith(name)).map((l) => Number(l.split(' ').at(-1)))
  return values('meterline_aggregator_lag_events{').every((v) => v === 0) && values('meterline_spool_oldest_unforwarded_age_seconds ').every((v) => v === 0)
}

/**
 * Waits until the platform caught up: every meter's total unchanged for `stableMs`, the
 * aggregator's lag 0 and nothing unforwarded in the spool. While a total is below the acknowledged
 * count it waits longer (the spool resends what a restarted broker lost after
 * SPOOL_RESEND_AFTER_MS, 60 s): 75 s stable, at most 6 minutes in all. Returns the time it took.
 */
async function settleCounts(
  p: ChaosPlatform, api: Api, meters: AuditMeter[], w: Window, events: Map<string, { acked: boolean }>, stableMs: number,
  log: (line: string) => void, at: () => number,
): Promise<number> {
  const t0 = Date.now()
  const acked = [...events.values()].filter((e) => e.acked).length
  let last = ''
  let since = Date.now()
  let nextNote = 15_000
  for (;;) {
    let totals: number[] = []
    let ready = false
    try {
      totals = await Promise.all(meters.map((m) => meterTotal(api, m, w)))
      ready = await caughtUp(p.url)
    } catch {
      // a read failed: try again
    }
    const key = totals.join(',')
    if (key !== last) {
      last = key
      since = Date.now()
    }
    const stable = Date.now() - since
    if (Date.now() - t0 >= nextNote) {
      nextNote += 15_000
      log(`[chaos] ${at()}s catching up: totals ${key || '?'} for ${acked} acknowledged, lag and spool ${ready ? 'empty' : 'not empty'}`)
    }
    const reached = totals.length === meters.length && totals.every((t) => t >= acked)
    if (ready && stable >= (reached ? stableMs : 75_000)) break
    if (Date.now() - t0 > 360_000) {
      log(`[chaos] ${at()}s still not settled after 6 minutes (totals ${key}, ${acked} acknowledged): auditing anyway`)
      break
    }
    await sleep(1000)
  }
  log(`[chaos] ${at()}s caught up in ${Date.now() - t0} ms: totals ${last} for ${acked} acknowledged`)
  return Date.now() - t0
}
