// The chaos run's client: streams events with unique ids in bulk requests and behaves like a real
// client around failures. A request that failed or timed out is sent again with the same body
// (the same event ids, byte for byte); some requests time out on purpose after a few ms, so the
// server may have accepted what the client counts as unacknowledged; events already sent are
// sent again in other batch compositions (mixed with new ones), acknowledged events are sent
// again much later, and a batch that exhausted its attempts is abandoned (its events stay
// unacknowledged unless a later batch carries them again). Every choice is drawn from the
// worker's seeded PRNG.
import { between, chance, pickWeighted, rng, type Rng } from './schedule.js'

export interface ChaosEvent {
  id: string
  /** the event's JSON, fixed at creation: every resend carries the same bytes */
  json: string
  acked: boolean
  /** the event's timestamp (ms) */
  at: number
}

export interface ClientStats {
  requests: number
  accepted: number
  failed: number
  timeouts: number
  resent: number
  rejected: number
  abandonedBatches: number
  mixedBatches: number
  lateBatches: number
  abandonedResent: number
  /** events sent again after they were acknowledged (copies), in requests that got a 202 */
  copies: number
  /** of those, copies whose timestamp was older than the aggregators' hot window when sent: checked in dedup_events */
  coldCopies: number
  /** events in requests that got a 202, copies included */
  eventsAccepted: number
}

export interface ChaosClient {
  events: Map<string, ChaosEvent>
  stats: ClientStats
  /** the last refused (4xx other than 408/429) answers: a client bug or a platform bug */
  rejections: string[]
  /** stops starting new batches; resolves when every batch in flight got its answer or gave up */
  stop(): Promise<void>
}

export interface ClientOptions {
  url: string
  apiKey: string
  eventName: string
  runId: string
  seed: number
  /** new events per second, all workers together */
  rate: number
  concurrency: number
  customers: number
  /** the aggregators' hot window (AGGREGATOR_HOT_WINDOW_MINUTES): a copy older than it takes the cold path */
  hotWindowMs: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const RETRIABLE = (status: number) => status === 408 || status === 429 || status >= 500

/** what the workers share: every event, the orders batches draw from, and the figures */
interface ClientState {
  opts: ClientOptions
  events: Map<string, ChaosEvent>
  /** every event, in creation order */
  order: ChaosEvent[]
  /** events in the order they were first acknowledged */
  ackedOrder: ChaosEvent[]
  /** events of abandoned batches, not yet sent again */
  abandoned: ChaosEvent[]
  stats: ClientStats
  rejections: string[]
  /** the number of the next event */
  next: number
  stopping: boolean
}

export function startChaosClient(opts: ClientOptions): ChaosClient {
  const s = clientState(opts)
  const done = Promise.all(Array.from({ length: opts.concurrency }, (_, w) => worker(s, w)))
  return {
    events: s.events,
    stats: s.stats,
    rejections: s.rejections,
    async stop() {
      s.stopping = true
      await done
    },
  }
}

function clientState(opts: ClientOptions): ClientState {
  const stats: ClientStats = {
    requests: 0, accepted: 0, failed: 0, timeouts: 0, resent: 0, rejected: 0, abandonedBatches: 0, mixedBatches: 0, lateBatches: 0, abandonedResent: 0,
    copies: 0, coldCopies: 0, eventsAccepted: 0,
  }
  return { opts, events: new Map(), order: [], ackedOrder: [], abandoned: [], stats, rejections: [], next: 0, stopping: false }
}

/** one worker: composes and sends batches at its share of the rate until stopped */
async function worker(s: ClientState, w: number) {
  const r = rng(s.opts.seed * 7919 + w)
  while (!s.stopping) {
    const t0 = Date.now()
    const { batch, fresh } = compose(s, r)
    if (!(await send(s, r, batch))) {
      s.stats.abandonedBatches++
      s.abandoned.push(...batch.filter((e) => !e.acked))
    }
    // pace: this worker's share of the rate
    const due = (fresh * s.opts.concurrency * 1000) / s.opts.rate - (Date.now() - t0)
    if (due > 0 && !s.stopping) await sleep(Math.min(due, 5000))
  }
}

function newEvent(s: ClientState): ChaosEvent {
  const id = `${s.opts.runId}-${s.next++}`
  const at = Date.now()
  const json = JSON.stringify({
    event_id: id,
    event_name: s.opts.eventName,
    external_customer_id: `cust-${s.next % s.opts.customers}`,
    timestamp: new Date(at).toISOString(),
    properties: { n: 1, eid: id },
  })
  const e = { id, json, acked: false, at }
  s.events.set(id, e)
  s.order.push(e)
  return e
}

const newEvents = (s: ClientState, n: number) => Array.from({ length: n }, () => newEvent(s))
const sample = (r: Rng, from: ChaosEvent[], n: number) => Array.from({ length: Math.min(n, from.length) }, () => from[Math.floor(r() * from.length)])

/** one batch: events chosen by the worker's PRNG (new ones are created here) */
function compose(s: ClientState, r: Rng): { batch: ChaosEvent[]; fresh: number } {
  const kind = pickWeighted(r, [['new', 75], ['mixed', 12], ['late', 7], ['abandoned', 6]] as ['new' | 'mixed' | 'late' | 'abandoned', number][])
  const fresh = between(r, 1, 200)
  if (kind === 'mixed' && s.order.length > 0) {
    s.stats.mixedBatches++
    const batch = [...newEvents(s, fresh), ...sample(r, s.order, between(r, 1, 100))]
    return { batch: shuffle(r, dedupe(batch)), fresh }
  }
  if (kind === 'late' && s.ackedOrder.length > 100) {
    s.stats.lateBatches++
    // acknowledged long ago: the older half of what was acknowledged so far
    return { batch: dedupe(sample(r, s.ackedOrder.slice(0, Math.floor(s.ackedOrder.length / 2)), between(r, 1, 200))), fresh: 0 }
  }
  if (kind === 'abandoned' && s.abandoned.length > 0) {
    const again = s.abandoned.splice(0, between(r, 1, 300))
    s.stats.abandonedResent += again.length
    return { batch: shuffle(r, [...again, ...newEvents(s, between(r, 0, 50))]), fresh: 0 }
  }
  return { batch: newEvents(s, fresh), fresh }
}

/** sends one batch until 202 or its attempts run out; true when acknowledged */
async function send(s: ClientState, r: Rng, batch: ChaosEvent[]): Promise<boolean> {
  const body = `{"events":[${batch.map((e) => e.json).join(',')}]}`
  const attempts = pickWeighted(r, [[1, 4], [3, 12], [40, 84]] as [number, number][])
  const sentAt = Date.now()
  let backoff = 100
  for (let attempt = 1; ; attempt++) {
    // now and then the answer is "lost": the client gives up waiting after a few ms
    const timeoutMs = chance(r, 0.04) ? between(r, 2, 80) : 15_000
    s.stats.requests++
    if (attempt > 1) s.stats.resent++
    try {
      const res = await fetch(`${s.opts.url}/v1/events/raw/bulk`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': s.opts.apiKey }, body, signal: AbortSignal.timeout(timeoutMs),
      })
      const text = await res.text()
      if (res.status === 202) return acknowledged(s, batch, sentAt)
      if (!RETRIABLE(res.status)) return refused(s, res.status, text)
      s.stats.failed++
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') s.stats.timeouts++
      else s.stats.failed++
    }
    if (attempt >= attempts) return false
    await sleep(backoff)
    backoff = Math.min(backoff * 2, 2000)
  }
}

/** a 202: the batch's events are acknowledged; those acknowledged before are counted as copies */
function acknowledged(s: ClientState, batch: ChaosEvent[], sentAt: number): true {
  s.stats.accepted++
  s.stats.eventsAccepted += batch.length
  for (const e of batch) {
    if (e.acked) s.stats.copies++
    if (e.acked && sentAt - e.at > s.opts.hotWindowMs) s.stats.coldCopies++
    if (!e.acked) s.ackedOrder.push(e)
    e.acked = true
  }
  return true
}

/** a 4xx other than 408/429: not sent again, and kept (the first 20) for the summary */
function refused(s: ClientState, status: number, text: string): false {
  s.stats.rejected++
  if (s.rejections.length < 20) s.rejections.push(`${status} ${text.slice(0, 300)}`)
  return false
}

function dedupe(batch: ChaosEvent[]): ChaosEvent[] {
  return [...new Set(batch)]
}

function shuffle<T>(r: Rng, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1))
    ;[items[i], items[j]] = [items[j], items[i]]
  }
  return items
}
