// Open-loop load against the platform as `npm run up` runs it (the all-in-one process, or with
// --topology processes every role its own process over HTTP; started here on its own topic,
// data directory and ClickHouse engine, against the running stack):
//
//   npm run bench:steady -- --rate 20000 --seconds 60 [--batch 500] [--readers 4] [--preload 0] [--cpu-prof DIR]
//     [--topology all-in-one|processes] [--json FILE]
//
// Offers `rate` events/s whatever the platform answers (a refused or failed request is counted,
// not retried), with two meters (SUM and COUNT). Meanwhile a probe event a second per reader is
// sent and usage is read until it shows: freshness = 202 of the probe -> visible in usage, and
// every read's latency is a usage read beside the writes. After the load: drain time, and the
// totals checked against what was acknowledged. Prints one table; asserts nothing.
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../platform/config.js'
import { HELD, scrapeStages, STAGES, stagesText, STEPS, type StageBuckets } from './support/write-path-stages.js'
import { memoryAtPeak, memoryText } from './support/memory-at-peak.js'
import { cpuByProcess as cpuByProcessOf, parseTopology, perProcessFigures, perProcessText, rssPeaks, startPlatformChild } from './support/platform-child.js'

const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '60' },
    batch: { type: 'string', default: '500' },
    readers: { type: 'string', default: '2' },
    preload: { type: 'string', default: '0' },
    port: { type: 'string', default: process.env.BENCH_PORT ?? '18080' },
    keep: { type: 'boolean', default: false },
    /** write a CPU profile of the platform process into this directory */
    'cpu-prof': { type: 'string' },
    topology: { type: 'string', default: 'all-in-one' },
    /** also write the figures as JSON (bench/topology.ts reads them) */
    json: { type: 'string' },
  },
})
const TOPOLOGY = parseTopology(args.topology)
const PROCESSES = TOPOLOGY === 'processes'
const RATE = Number(args.rate)
const SECONDS = Number(args.seconds)
const BATCH = Number(args.batch)
const READERS = Number(args.readers)
const PRELOAD = Number(args.preload)
const PORT = Number(args.port)

const config = loadConfig(process.env)
const dir = join(config.dataDir, 'bench-steady')
const id = Date.now().toString(36)
const platform = await startPlatformChild({
  topology: TOPOLOGY, config, dir, fresh: !args.keep, port: PORT, id,
  execArgv: args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] : [],
})
const { apiUrl: base, ingestUrl: ingestBase, key, adminToken } = platform
const headers = { 'content-type': 'application/json', 'x-api-key': key }
const post = async (path: string, body: unknown) => {
  const res = await fetch((path === '/v1/events' ? ingestBase : base) + path, { method: 'POST', headers, body: JSON.stringify(body) })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}
const sum = (await post('/v1/meters', { name: 'tokens', event_name: 'llm', aggregation: { type: 'SUM', field: 'tokens' } })).body as { id: string }
const count = (await post('/v1/meters', { name: 'calls', event_name: 'llm', aggregation: { type: 'COUNT' } })).body as { id: string }
const window = { start_time: '2026-01-01T00:00:00Z', end_time: '2027-01-01T00:00:00Z' }
const totalOf = async (meterId: string, customer?: string) => {
  const t0 = performance.now()
  const res = await post(`/v1/meters/${meterId}/usage`, { ...window, ...(customer ? { external_customer_id: customer } : {}) })
  const ms = performance.now() - t0
  return { ms, value: Number(res.body.value ?? 0), status: res.status }
}

// Warm-up: one event through to a usage read before anything is measured (the aggregator's
// consumers join their group and load their shards first; that start is not the steady state).
const warmStart = Date.now()
let warmedUp = false
while (!warmedUp && Date.now() - warmStart < 120_000) {
  const res = await post('/v1/events', { event_id: `warmup-${id}`, event_name: 'llm', external_customer_id: 'warmup', timestamp: new Date(warmStart - 5000).toISOString(), properties: { tokens: 1 } })
  if (res.status === 202) {
    for (let i = 0; i < 600 && !warmedUp; i++) {
      warmedUp = (await totalOf(count.id, 'warmup')).value >= 1
      if (!warmedUp) await new Promise((r) => setTimeout(r, 100))
    }
  } else await new Promise((r) => setTimeout(r, 500))
}
// ...and the group settled: every consumer listed holds partitions, each partition once, and the
// assignment unchanged for 5 s (a consumer joining after the first event is counted moves
// partitions, and records wait in the broker meanwhile: a start, not the steady state).
const settleStart = Date.now()
let settled = false
for (let last = '', since = Date.now(); Date.now() - settleStart < 120_000; await new Promise((r) => setTimeout(r, 500))) {
  const res = await fetch(`${base}/v1/admin/aggregators`, { headers: { authorization: `Bearer ${adminToken}` } }).catch(() => undefined)
  const items = res?.ok ? ((await res.json()) as { items: { name: string; partitions: number[] }[] }).items : []
  const held = items.flatMap((a) => a.partitions)
  const view = JSON.stringify(items.map((a) => [a.name, [...a.partitions].sort((x, y) => x - y)]).sort())
  const whole = items.length > 0 && items.every((a) => a.partitions.length > 0) && new Set(held).size === held.length
  if (!whole || view !== last) {
    last = view
    since = Date.now()
  } else if (Date.now() - since >= 5_000) {
    settled = true
    break
  }
}
const warmUpMs = Date.now() - warmStart
const WARMUP_EVENTS = warmedUp ? 1 : 0

const cpuByProcess = () => cpuByProcessOf(platform.processes())
const cpuOf = () => [...cpuByProcess().values()].reduce((a, b) => a + b, 0)
const rss = rssPeaks(platform.processes)
const memory = memoryAtPeak(platform.processes)

let seq = 0
const customers = 1000
function batch(n: number): string {
  const ts = Date.now() - 5_000
  const events = new Array<string>(n)
  for (let i = 0; i < n; i++) {
    const s = seq++
    events[i] = `{"event_id":"e${id}-${s}","event_name":"llm","external_customer_id":"c${s % customers}","timestamp":"${new Date(ts + (s % 1000)).toISOString()}","properties":{"tokens":${(s % 7) + 1}}}`
  }
  return `{"events":[${events.join(',')}]}`
}
let acknowledged = 0
let tokensAcknowledged = 0
let refused = 0
let failed = 0
let inFlight = 0
const maxInFlight = 256
async function send(body: string, n: number, tokens: number): Promise<boolean> {
  if (inFlight >= maxInFlight) {
    refused += n // the client's own limit: counted as not offered in time
    return false
  }
  inFlight++
  try {
    const res = await fetch(`${ingestBase}/v1/events/raw/bulk`, { method: 'POST', headers, body })
    await res.arrayBuffer()
    if (res.status === 202) {
      acknowledged += n
      tokensAcknowledged += tokens
      return true
    }
    refused += n
    return false
  } catch {
    failed += n
    return false
  } finally {
    inFlight--
  }
}
const tokensOf = (from: number, n: number) => {
  let t = 0
  for (let s = from; s < from + n; s++) t += (s % 7) + 1
  return t
}

// The backlog: events stored before the measured load (reads at size), sent as fast as ingest
// accepts them; meanwhile one reader reads usage every 200 ms (reads beside a draining backlog).
const backlog = { accepted: 0, acceptSeconds: 0, drainSeconds: 0, reads: [] as number[] }
if (PRELOAD > 0) {
  const t0 = performance.now()
  let reading = true
  const reader = (async () => {
    while (reading) {
      backlog.reads.push((await totalOf(count.id, 'c1')).ms)
      await new Promise((r) => setTimeout(r, 200))
    }
  })()
  while (seq < PRELOAD) {
    const sends: Promise<boolean>[] = []
    for (let i = 0; i < 16 && seq < PRELOAD; i++) {
      const from = seq
      const n = Math.min(BATCH, PRELOAD - seq)
      sends.push(send(batch(n), n, tokensOf(from, n)))
    }
    await Promise.all(sends)
  }
  backlog.accepted = acknowledged
  backlog.acceptSeconds = (performance.now() - t0) / 1000
  while ((await totalOf(count.id)).value < acknowledged) await new Promise((r) => setTimeout(r, 1000))
  backlog.drainSeconds = (performance.now() - t0) / 1000 - backlog.acceptSeconds
  reading = false
  await reader
  console.log(`preloaded ${acknowledged} events in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
}
const preloaded = acknowledged
const cpuBefore = cpuOf()
const cpuBeforeByProcess = cpuByProcess()
const preRefused = refused + failed

// Probes: a marked event per reader and second; freshness = its 202 -> visible in usage.
const freshness: number[] = []
let probesAcknowledged = 0
const reads: number[] = []
let probing = true
async function prober(r: number): Promise<void> {
  let n = 0
  while (probing) {
    const t0 = Date.now()
    const res = await post('/v1/events', { event_id: `probe-${id}-${r}-${n}`, event_name: 'llm', external_customer_id: `probe-${r}`, timestamp: new Date(t0 - 5000).toISOString(), properties: { tokens: 1 } })
    if (res.status !== 202) {
      await new Promise((x) => setTimeout(x, 1000))
      continue
    }
    const acked = Date.now()
    n++
    probesAcknowledged++
    for (;;) {
      const read = await totalOf(count.id, `probe-${r}`)
      reads.push(read.ms)
      if (read.value >= n) {
        freshness.push(Date.now() - acked)
        break
      }
      if (!probing && Date.now() - acked > 120_000) break
      await new Promise((x) => setTimeout(x, 20))
    }
    await new Promise((x) => setTimeout(x, Math.max(0, 1000 - (Date.now() - t0))))
  }
}
const probers = Array.from({ length: READERS }, (_, r) => prober(r))

const aggregatorPorts = () => (PROCESSES ? platform.processes().filter((p) => p.kind === 'aggregator') : platform.processes()).map((p) => p.port)
const lagOf = async () => {
  let lag = 0
  for (const port of aggregatorPorts()) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    lag += [...text.matchAll(/^meterline_aggregator_consumer_lag\{[^}]*\} (\d+)/gm)].reduce((s, m) => s + Number(m[1]), 0)
  }
  return lag
}
const lags: number[] = []
const lagTimer = setInterval(() => void lagOf().then((l) => lags.push(l)).catch(() => undefined), 1000)

const stagesBefore = await scrapeStages(aggregatorPorts())

// Open loop: every 10 ms, whatever is due by now is sent, answered or not.
const started = performance.now()
let offered = 0
const sends = new Set<Promise<boolean>>()
while (performance.now() - started < SECONDS * 1000) {
  const due = Math.floor(((performance.now() - started) / 1000) * RATE) - offered
  for (let left = due; left > 0; left -= BATCH) {
    const n = Math.min(BATCH, left)
    const from = seq
    const p = send(batch(n), n, tokensOf(from, n))
    sends.add(p)
    void p.finally(() => sends.delete(p))
    offered += n
  }
  await new Promise((r) => setTimeout(r, 10))
}
await Promise.all([...sends])
const loadSeconds = (performance.now() - started) / 1000
const loadEnd = Date.now()
probing = false
const measured = acknowledged - preloaded
// Drain: until both meters show everything acknowledged (probes included).
let drained = 0
const probeEvents = () => probesAcknowledged
for (;;) {
  const [c, s] = await Promise.all([totalOf(count.id), totalOf(sum.id)])
  if (c.value >= acknowledged + probeEvents() + WARMUP_EVENTS && s.value >= tokensAcknowledged + probeEvents() + WARMUP_EVENTS) {
    drained = Date.now() - loadEnd
    break
  }
  if (Date.now() - loadEnd > 600_000) break
  await new Promise((r) => setTimeout(r, 250))
}
const cpuUsed = cpuOf() - cpuBefore
const stagesAfter = await scrapeStages(aggregatorPorts()).catch(() => new Map() as StageBuckets)
const stages = stagesText(stagesBefore, stagesAfter, STAGES)
const writeSteps = stagesText(stagesBefore, stagesAfter, STEPS)
const fetchHeld = stagesText(stagesBefore, stagesAfter, HELD)
const cpuAfterByProcess = cpuByProcess()
await Promise.all(probers)
await new Promise((r) => setTimeout(r, 3000))
const [finalCount, finalSum] = await Promise.all([totalOf(count.id), totalOf(sum.id)])
clearInterval(lagTimer)
rss.stop()
const memoryPeak = await memory.stop()
// The admin API reports the aggregators of billing-api's own process (none in the processes topology).
const adminAnswer = await fetch(`${base}/v1/admin/aggregators`, { headers: { authorization: `Bearer ${adminToken}` } })
const write = (adminAnswer.ok ? await adminAnswer.json() : { items: [] }) as { items: { events: number; writes: number }[] }

const q = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const perProcess = perProcessFigures(cpuBeforeByProcess, cpuAfterByProcess, rss.maxByProcess)
const expectCount = acknowledged + probesAcknowledged + WARMUP_EVENTS
const expectSum = tokensAcknowledged + probesAcknowledged + WARMUP_EVENTS
const rows: [string, string][] = [
  ['machine', `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`],
  ['warm-up', `${warmedUp ? 'first event counted' : 'no event counted'}, group ${settled ? 'settled' : 'NOT settled'} ${warmUpMs} ms after start (not measured below)`],
  ...(PRELOAD > 0
    ? [
        ['backlog', `${backlog.accepted} events accepted in ${backlog.acceptSeconds.toFixed(1)} s (${Math.round(backlog.accepted / backlog.acceptSeconds)}/s), all counted ${backlog.drainSeconds.toFixed(1)} s later (${Math.round(backlog.accepted / (backlog.acceptSeconds + backlog.drainSeconds))} events/s through)`],
        ['usage read p50 / p99 during backlog', `${q(backlog.reads, 50).toFixed(1)} / ${q(backlog.reads, 99).toFixed(1)} ms (${backlog.reads.length} reads)`],
      ] as [string, string][]
    : []),
  ['offered', `${RATE} events/s for ${SECONDS} s (${offered} events, batches of ${BATCH}), ${preloaded} stored before`],
  ['accepted', `${Math.round(measured / loadSeconds)} events/s (${measured} acknowledged)`],
  ['refused / failed', `${refused + failed - preRefused} events`],
  ['freshness p50 / p99 / max', `${q(freshness, 50)} / ${q(freshness, 99)} / ${Math.max(...freshness)} ms (${freshness.length} probes)`],
  ['usage read p50 / p99 during load', `${q(reads, 50).toFixed(1)} / ${q(reads, 99).toFixed(1)} ms (${reads.length} reads)`],
  ['write-path stages p50 / p99 ms (every record)', stages],
  ['steps of a write p50 / p99 ms (every write)', writeSteps],
  ['fetch held by writes p50 / p99 ms (every batch)', fetchHeld],
  ['consumer lag max (records)', `${Math.max(0, ...lags)}`],
  ['drain after load', drained ? `${drained} ms` : 'not drained in 600 s'],
  ['platform CPU per event', `${((cpuUsed * 1e6) / Math.max(1, measured)).toFixed(0)} us (${cpuUsed.toFixed(1)} CPU s from load start to drained, all threads)`],
  ['RSS max (platform)', `${(rss.max() / 1024 ** 2).toFixed(0)} MiB`],
  ['memory at the peak (MiB)', memoryText(memoryPeak)],
  ...(PROCESSES ? [['per process: CPU s / RSS max', perProcessText(perProcess)]] as [string, string][] : []),
  ['aggregator writes', `${write.items.reduce((s, a) => s + a.writes, 0)} writes for ${write.items.reduce((s, a) => s + a.events, 0)} events`],
  ['exact', `COUNT ${finalCount.value} of ${expectCount}, SUM ${finalSum.value} of ${expectSum}: ${finalCount.value === expectCount && finalSum.value === expectSum ? 'yes' : 'NO'}`],
]
if (args.json) {
  writeFileSync(args.json, JSON.stringify({
    topology: args.topology, rate: RATE, seconds: SECONDS, loadavg: os.loadavg(), acceptedPerSecond: measured / loadSeconds, acknowledged: measured,
    refused: refused + failed - preRefused, freshness: { p50: q(freshness, 50), p99: q(freshness, 99), max: Math.max(...freshness) },
    reads: { p50: q(reads, 50), p99: q(reads, 99), n: reads.length }, stages, writeSteps, lagMax: Math.max(0, ...lags), drainedMs: drained,
    cpuPerEventUs: (cpuUsed * 1e6) / Math.max(1, measured), rssMaxMiB: rss.max() / 1024 ** 2,
    perProcess: Object.fromEntries(perProcess.map(({ name, ...figures }) => [name, figures])),
    exact: finalCount.value === expectCount && finalSum.value === expectSum,
  }, null, 2))
}
const width = Math.max(...rows.map((r) => r[0].length))
console.log(`\nbench:steady ${new Date().toISOString()}`)
for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`)
await platform.stop()
