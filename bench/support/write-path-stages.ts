// Where freshness goes: the aggregators' `meterline_write_path_stage_seconds` histograms scraped
// before and after a run, and each stage's p50 / p99 over the run (linear within a bucket).
/** the stages of a record's freshness, and the steps of one write */
export const STAGES = ['spool', 'broker', 'queue', 'write', 'commit']
export const STEPS = ['prepare', 'fence', 'insert', 'keys', 'done']
/** a fetched batch's wait for its partition's earlier writes (the consumer's next fetch waits with it) */
export const HELD = ['held']

/** stage -> cumulative bucket counts by upper bound, summed over the given /metrics endpoints */
export type StageBuckets = Map<string, Map<number, number>>

export async function scrapeStages(ports: number[]): Promise<StageBuckets> {
  const out: StageBuckets = new Map()
  for (const port of ports) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    for (const m of text.matchAll(/^meterline_(write_path_stage|aggregator_write_step|aggregator_fetch_held)_seconds_bucket\{([^}]*)\} (\S+)/gm)) {
      const stage = m[1] === 'aggregator_fetch_held' ? 'held' : /(?:stage|step)="([^"]+)"/.exec(m[2])?.[1]
      const le = /le="([^"]+)"/.exec(m[2])?.[1]
      if (!stage || !le) continue
      const bound = le === '+Inf' ? Infinity : Number(le)
      const buckets = out.get(stage) ?? new Map<number, number>()
      buckets.set(bound, (buckets.get(bound) ?? 0) + Number(m[3]))
      out.set(stage, buckets)
    }
  }
  return out
}

function quantile(buckets: [number, number][], p: number): number {
  const total = buckets.at(-1)?.[1] ?? 0
  if (total === 0) return NaN
  const rank = p * total
  let lower = 0
  let below = 0
  for (const [bound, n] of buckets) {
    if (n >= rank) return bound === Infinity ? lower : lower + ((bound - lower) * (rank - below)) / Math.max(1, n - below)
    lower = bound
    below = n
  }
  return lower
}

/** `name p50 / p99` (ms) for each of `names` (STAGES or STEPS), from the difference of two scrapes */
export function stagesText(before: StageBuckets, after: StageBuckets, names: string[]): string {
  return names.map((stage) => {
    const a = after.get(stage)
    if (!a) return `${stage} -`
    const b = before.get(stage)
    const diff = [...a.entries()].sort((x, y) => x[0] - y[0]).map(([bound, n]) => [bound, n - (b?.get(bound) ?? 0)] as [number, number])
    const ms = (p: number) => Math.round(quantile(diff, p) * 1000)
    return `${stage} ${ms(0.5)} / ${ms(0.99)}`
  }).join('; ')
}
