// The chaos run's schedule: a seeded PRNG (mulberry32) and the fault sequence it draws. The same
// seed gives the same sequence of faults, pauses and client choices; only the wall-clock times
// at which they land differ from run to run (a fault starts a drawn pause after the previous one
// finished, so slow restarts never pile faults on top of each other).

export type FaultKind =
  | 'kill9' // kill -9 of the platform process, then up again
  | 'restart-kafka' // scripts/stack.sh restart-kafka: the in-memory broker loses every record
  | 'down-up' // npm run down, then npm run up
  | 'aggregator-join' // PUT /v1/admin/aggregators {"consumers": 2}
  | 'aggregator-leave' // PUT /v1/admin/aggregators {"consumers": 1}
  | 'create-meter' // POST /v1/meters mid-stream: its backfill must count the earlier events
  | 'postgres-stop' // pg_ctl stop, a few seconds, start
  | 'redis-stop' // redis shutdown, a few seconds, start
  // the processes topology only:
  | 'aggregator-kill9' // kill -9 of one aggregator process (the supervisor starts it again)
  | 'aggregator-pause' // SIGSTOP of one aggregator process past the group session, then SIGCONT
  | 'endpoint-kill9' // kill -9 of the local ClickHouse endpoint (the supervisor starts it again)

export interface Fault {
  kind: FaultKind
  /** pause before this fault, after the previous one finished */
  gapMs: number
  /** how long the fault lasts: down time of the platform, Postgres or Redis */
  holdMs: number
  /** create-meter: the aggregation of the new meter */
  aggregation?: 'COUNT' | 'SUM'
}

export type Rng = () => number

/** mulberry32: small, fast, and the same numbers for the same seed on every platform. */
export function rng(seed: number): Rng {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export const between = (r: Rng, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1))
export const chance = (r: Rng, p: number): boolean => r() < p
export function pickWeighted<T>(r: Rng, items: [T, number][]): T {
  const total = items.reduce((s, [, w]) => s + w, 0)
  let x = r() * total
  for (const [item, w] of items) if ((x -= w) < 0) return item
  return items[items.length - 1][0]
}

/**
 * An endless fault sequence for a seed. `pace` scales the pauses between faults (1: 2-12 s)
 * and, below 1, the down times (1: Postgres or Redis 2.5-6.5 s, the platform 0-3 s, an
 * aggregator paused 12-20 s); the bounded test uses a shorter pace. A joined aggregator always
 * leaves again later. With `processes`, faults of single role processes join the draw.
 */
export function* faultSchedule(seed: number, pace = 1, processes = false): Generator<Fault> {
  const r = rng(seed ^ 0x5eed)
  let joined = false
  let meters = 0
  for (;;) {
    const kind = pickWeighted<FaultKind>(r, [
      ['kill9', 4],
      ['restart-kafka', 3],
      ['down-up', 2],
      [joined ? 'aggregator-leave' : 'aggregator-join', joined ? 4 : 2],
      ['create-meter', meters < 6 ? 1.5 : 0.3],
      ['postgres-stop', 2],
      ['redis-stop', 2],
      ...(processes ? ([['aggregator-kill9', 3], ['aggregator-pause', 2], ['endpoint-kill9', 2]] as [FaultKind, number][]) : []),
    ])
    if (kind === 'aggregator-join') joined = true
    if (kind === 'aggregator-leave') joined = false
    if (kind === 'create-meter') meters++
    yield {
      kind,
      gapMs: Math.round(between(r, 2000, 12_000) * pace),
      holdMs: holdOf(r, kind, pace),
      ...(kind === 'create-meter' ? { aggregation: chance(r, 0.5) ? ('COUNT' as const) : ('SUM' as const) } : {}),
    }
  }
}

function holdOf(r: Rng, kind: FaultKind, pace: number): number {
  // past the group's session timeout (10 s) whatever the pace: the pause must cost the member its partitions
  if (kind === 'aggregator-pause') return between(r, 12_000, 20_000)
  const base = kind === 'kill9' || kind === 'down-up' || kind === 'aggregator-kill9' || kind === 'endpoint-kill9' ? between(r, 0, 3000) : between(r, 2000, 6000)
  return Math.round(base * Math.min(pace, 1)) + (kind === 'postgres-stop' || kind === 'redis-stop' ? 500 : 0)
}
