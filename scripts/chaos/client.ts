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

export function startChaosClient(opts: ClientOptions): ChaosClient {
  const events = new Map<string, ChaosEvent>()
  const order: ChaosEvent[] = [] // every event, in creation order
  const ackedOrder: ChaosEvent[] = [] // events in the order they were first acknowledged
  const abandoned: ChaosEvent[] = []
  const stats: ClientStats = {
    requests: 0, accepted: 0, failed: 0, timeouts: 0, resent: 0, rejected: 0, abandonedBatches: 0, mixedBatches: 0, lateBatches: 0, abandonedResent: 0,
    copies: 0, coldCopies: 0, eventsAccepted: 0,
  }
  const rejections: string[] = []
  let next = 0
  let stopping = false

  function newEvent(): ChaosEvent {
    const id = `${opts.runId}-${next++}`
    const at = Date.now()
    const json = JSON.stringify({
      event_id: id,
      event_name: opts.eventName,
      external_customer_id: `cust-${next % opts.customers}`,
      timestamp: new Date(at).toISOString(),
      properties: { n: 1, eid: id },
    })
    const e = { id, json, acked: false, at }
    events.set(id, e)
    order.push(e)
    return e
  }

  const sample = (r: Rng, from: ChaosEvent[], n: number) => Array.from({ length: Math.min(n, from.length) }, () => from[Math.floor(r() * from.length)])

  /** one batch: events chosen by the worker's PRNG (new ones are created here) */
  function compose(r: Rng): { batch: ChaosEvent[]; fresh: number } {
    const kind = pickWeighted(r, [['new', 75], ['mixed', 12], ['late', 7], ['abandoned', 6]] as ['new' | 'mixed' | 'late' | 'abandoned', number][])
    const fresh = between(r, 1, 200)
    if (kind === 'mixed' && order.length > 0) {
      stats.mixedBatches++
      const batch = [...Array.from({ length: fresh }, newEvent), ...sample(r, order, between(r, 1, 100))]
      return { batch: shuffle(r, dedupe(batch)), fresh }
    }
    if (kind === 'late' && ackedOrder.length > 100) {
      stats.lateBatches++
      // acknowledged long ago: the older half of what was acknowledged so far
      return { batch: dedupe(sample(r, ackedOrder.slice(0, Math.floor(ackedOrder.length / 2)), between(r, 1, 200))), fresh: 0 }
    }
    if (kind === 'abandoned' && abandoned.length > 0) {
      const again = abandoned.splice(0, between(r, 1, 300))
      stats.abandonedResent += again.length
      return { batch: shuffle(r, [...again, ...Array.from({ length: between(r, 0, 50) }, newEvent)]), fresh: 0 }
    }
    return { batch: Array.from({ length: fresh }, newEvent), fresh }
  }

  /** sends one batch until 202 or its attempts run out; true when acknowledged */
  async function send(r: Rng, batch: ChaosEvent[]): Promise<boolean> {
    const body = `{"events":[${batch.map((e) => e.json).join(',')}]}`
    const attempts = pickWeighted(r, [[1, 4], [3, 12], [40, 84]] as [number, number][])
    const sentAt = Date.now()
    let backoff = 100
    for (let attempt = 1; ; attempt++) {
      // now and then the answer is "lost": the client gives up waiting after a few ms
      const timeoutMs = chance(r, 0.04) ? between(r, 2, 80) : 15_000
      stats.requests++
      if (attempt > 1) stats.resent++
      try {
        const res = await fetch(`${opts.url}/v1/events/raw/bulk`, {
          method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': opts.apiKey }, body, signal: AbortSignal.timeout(timeoutMs),
        })
        const text = await res.text()
        if (res.status === 202) {
          stats.accepted++
          stats.eventsAccepted += batch.length
          for (const e of batch) {
            if (e.acked) stats.copies++
            if (e.acked && sentAt - e.at > opts.hotWindowMs) stats.coldCopies++
            if (!e.acked) ackedOrder.push(e)
            e.acked = true
          }
          return true
        }
        if (!RETRIABLE(res.status)) {
          stats.rejected++
          if (rejections.length < 20) rejections.push(`${res.status} ${text.slice(0, 300)}`)
          return false
        }
        stats.failed++
      } catch (err) {
        if ((err as Error).name === 'TimeoutError') stats.timeouts++
        else stats.failed++
      }
      if (attempt >= attempts) return false
      await sleep(backoff)
      backoff = Math.min(backoff * 2, 2000)
    }
  }

  async function worker(w: number) {
    const r = rng(opts.seed * 7919 + w)
    while (!stopping) {
      const t0 = Date.now()
      const { batch, fresh } = compose(r)
      if (!(await send(r, batch))) {
        stats.abandonedBatches++
        abandoned.push(...batch.filter((e) => !e.acked))
      }
      // pace: this worker's share of the rate
      const due = (fresh * opts.concurrency * 1000) / opts.rate - (Date.now() - t0)
      if (due > 0 && !stopping) await sleep(Math.min(due, 5000))
    }
  }

  const done = Promise.all(Array.from({ length: opts.concurrency }, (_, w) => worker(w)))
  return {
    events,
    stats,
    rejections,
    async stop() {
      stopping = true
      await done
    },
  }
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
