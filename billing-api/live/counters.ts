// Live usage counters: the usage of one (meter, customer, reset period) held in memory, built
// from one bucket read and then moved forward by every committed aggregator write
// (schemas/committed-write.ts) whose minute buckets fall inside the period (event time, not
// arrival time). Rules (docs/architecture.md, "Live access"):
// - applied once: a write is identified by (shard, epoch, seq); seqs of a (shard, epoch) arrive
//   in order, so a write at or below the highest seq seen of its (shard, epoch) is a replay
//   and is skipped. The high-water marks start from what the publisher recorded in Redis, so a
//   process that starts later skips replays of writes its bucket reads already hold;
// - never ahead of the buckets: a write is published only after its buckets are durable, and a
//   counter's base read records the high-water marks at its start (its fence): writes at or
//   below the fence are in the base, writes received while the read runs may or may not be,
//   so they are not added and the counter is read again in the background (behind, never ahead);
// - SUM, COUNT, MAX and AVG (sum and count) are served from memory. COUNT_UNIQUE, LATEST and
//   WEIGHTED_SUM cannot be moved forward by the folded buckets: their value is a bucket read,
//   kept until a write touches that (meter, customer), then read again on the next check;
// - a minute only partly inside the period (a period boundary not on a whole minute) is left
//   to the base read: a write into it marks the counter for a background read;
// - a meter the aggregator does not count live yet (its backfill runs: meter-activations.ts)
//   gets its events through the backfill, not through writes: its counters are read again
//   until the meter is active;
// - billing never reads counters.
import { Decimal } from 'decimal.js'
import type { CommittedWrite } from '../../schemas/committed-write.js'
import type { UsageReader } from '../context.js'
import { liveCounterEvents } from './metrics.js'

export type LiveAggregation = 'SUM' | 'COUNT' | 'COUNT_UNIQUE' | 'MAX' | 'LATEST' | 'AVG' | 'WEIGHTED_SUM'
const FROM_MEMORY = new Set<LiveAggregation>(['SUM', 'COUNT', 'MAX', 'AVG'])
const MINUTE = 60_000

export interface CounterQuery {
  tenantId: string
  environmentId: string
  meterId: string
  aggregation: LiveAggregation
  externalCustomerId: string
  start: Date
  /** null: open (NEVER resets) */
  end: Date | null
}

export interface CounterValue {
  /** as a usage row: AVG gives the sum, divided by event_count by the caller */
  value: string
  event_count: string
  /** every event acknowledged before this instant (ms) is included; null: unknown */
  asOf: number | null
}

interface Entry {
  q: CounterQuery
  key: string
  start: number
  end: number
  memory: boolean
  loading: boolean
  ready: Promise<void>
  sum: Decimal
  count: number
  max: Decimal | null
  /** non-additive reads: the value as read */
  read: { value: string; event_count: string }
  fence: Map<string, bigint>
  /** a write may be missing from the base: read again in the background */
  dirty: boolean
  /** non-additive: a write touched it since the read */
  stale: boolean
  /** the meter was not active when the base was read: read again once it is */
  inactive: boolean
  asOf: number | null
  generation: number
  /** the entry that replaces this one once its read finished */
  next?: Entry
}

/** meter series of a bucket or a query: tenant \0 environment \0 meter \0 customer */
export const seriesKey = (t: string, e: string, m: string, c: string) => `${t}\0${e}\0${m}\0${c}`
const entryKey = (q: CounterQuery) =>
  `${seriesKey(q.tenantId, q.environmentId, q.meterId, q.externalCustomerId)}\0${q.start.getTime()}\0${q.end?.getTime() ?? ''}\0${q.aggregation}`
const OPEN_END = new Date('2100-01-01T00:00:00Z')

export class LiveCounters {
  private readonly entries = new Map<string, Entry>()
  private readonly bySeries = new Map<string, Set<Entry>>()
  /** shard|epoch -> highest seq received */
  private readonly hwm = new Map<string, bigint>()
  private generation = 0
  /** newest usage_as_of heard from the publisher (ms) */
  asOf: number | null = null
  /** the id of this process's publisher (write-bus.ts): its messages were applied directly */
  ownPublisher?: string
  /** told the series every applied write touched (spend caps) */
  onApplied?: (series: Set<string>) => void

  constructor(
    private readonly read: UsageReader,
    private readonly maxEntries: number,
    private readonly isActive: (meterId: string) => Promise<boolean> = async () => true,
  ) {}

  /** High-water marks recorded by the publisher before this process listened (writes at or below are replays). */
  seedHighWater(marks: Map<string, bigint>): void {
    for (const [k, seq] of marks) if (seq > (this.hwm.get(k) ?? -1n)) this.hwm.set(k, seq)
  }

  /** Forgets every counter (messages may have been missed): each is read again from the buckets. */
  reset(): void {
    this.generation++
    this.entries.clear()
    this.bySeries.clear()
    liveCounterEvents.inc({ event: 'reset' })
  }

  heard(asOf: number | null): void {
    if (asOf !== null && (this.asOf === null || asOf > this.asOf)) this.asOf = asOf
  }

  apply(w: CommittedWrite): void {
    const ids = w.writes.map((x) => ({ k: `${x.shard}|${x.epoch}`, seq: BigInt(x.seq) }))
    const replayed = ids.filter((x) => x.seq <= (this.hwm.get(x.k) ?? -1n)).length
    if (replayed === ids.length) {
      liveCounterEvents.inc({ event: 'replay_skipped' })
      return
    }
    for (const x of ids) if (x.seq > (this.hwm.get(x.k) ?? -1n)) this.hwm.set(x.k, x.seq)
    const touched = new Set<string>()
    for (const b of w.buckets) {
      const series = seriesKey(b.tenant_id, b.environment_id, b.meter_id, b.external_customer_id)
      touched.add(series)
      const set = this.bySeries.get(series)
      if (!set) continue
      const t = b.bucket_start * 1000
      for (const e of set) {
        if (t + MINUTE <= e.start || t >= e.end) continue
        // Part of it was already applied elsewhere: unknown which part; read again (never ahead).
        if (replayed > 0 || e.loading) {
          e.dirty = true
          continue
        }
        if (ids.every((x) => x.seq <= (e.fence.get(x.k) ?? -1n))) continue // in the base
        if (!e.memory) {
          e.stale = true
          continue
        }
        if (t < e.start || t + MINUTE > e.end) {
          e.dirty = true // an edge minute: only the read knows which of its events belong
          continue
        }
        e.sum = e.sum.plus(b.value_sum)
        e.count += b.event_count
        if (e.max === null || e.max.lt(b.value_max)) e.max = new Decimal(b.value_max)
      }
    }
    liveCounterEvents.inc({ event: 'write_applied' })
    this.onApplied?.(touched)
  }

  async get(q: CounterQuery): Promise<CounterValue> {
    const k = entryKey(q)
    let e = this.entries.get(k)
    if (e && e.generation !== this.generation) e = undefined
    if (!e) {
      e = this.load(q, k)
      this.entries.set(k, e)
      while (this.entries.size > this.maxEntries) this.evict(this.entries.keys().next().value!)
    } else {
      this.entries.delete(k)
      this.entries.set(k, e)
    }
    if (e.loading) await e.ready
    if (!e.memory && e.stale) {
      // Read through: the next read replaces this entry.
      const fresh = e.next ?? this.reload(e)
      await fresh.ready
      e = fresh
    } else if ((e.dirty || e.inactive) && !e.next) {
      void this.reload(e)
    }
    return this.valueOf(e)
  }

  get size(): number {
    return this.entries.size
  }

  private valueOf(e: Entry): CounterValue {
    const asOf = e.dirty || e.stale || e.inactive ? e.asOf : this.asOf
    if (!e.memory) return { ...e.read, asOf }
    const agg = e.q.aggregation
    const value = agg === 'COUNT' ? String(e.count) : agg === 'MAX' ? (e.max ?? new Decimal(0)).toFixed() : e.sum.toFixed()
    return { value, event_count: String(e.count), asOf }
  }

  private newEntry(q: CounterQuery, key: string): Entry {
    const e: Entry = {
      q, key, start: q.start.getTime(), end: (q.end ?? OPEN_END).getTime(), memory: FROM_MEMORY.has(q.aggregation),
      loading: true, ready: Promise.resolve(), sum: new Decimal(0), count: 0, max: null, read: { value: '0', event_count: '0' },
      fence: new Map(this.hwm), dirty: false, stale: false, inactive: false, asOf: this.asOf, generation: this.generation,
    }
    const series = key.split('\0').slice(0, 4).join('\0')
    if (!this.bySeries.has(series)) this.bySeries.set(series, new Set())
    this.bySeries.get(series)!.add(e)
    e.ready = this.fill(e).finally(() => {
      e.loading = false
    })
    return e
  }

  private load(q: CounterQuery, key: string): Entry {
    liveCounterEvents.inc({ event: 'load' })
    const e = this.newEntry(q, key)
    e.ready.catch(() => {
      // A failed read is not kept: the next check reads again.
      if (this.entries.get(key) === e) this.evict(key)
    })
    return e
  }

  /** Reads the entry again beside the old one, which serves until the new read finished. */
  private reload(old: Entry): Entry {
    liveCounterEvents.inc({ event: 'rebase' })
    const fresh = this.newEntry(old.q, old.key)
    old.next = fresh
    fresh.ready.then(
      () => {
        if (this.entries.get(old.key) === old && fresh.generation === this.generation) {
          this.entries.set(old.key, fresh)
          this.unindex(old)
          // The value may have moved without a write (a backfill, a missed write): caps look again.
          this.onApplied?.(new Set([old.key.split('\0').slice(0, 4).join('\0')]))
        } else this.unindex(fresh)
      },
      () => {
        old.next = undefined
        this.unindex(fresh)
      },
    )
    return fresh
  }

  private async fill(e: Entry): Promise<void> {
    const { q } = e
    // Activation first: a meter active before the read started has its backfill in the buckets.
    e.inactive = !(await this.isActive(q.meterId))
    const [row] = await this.read({
      tenantId: q.tenantId, environmentId: q.environmentId, meterId: q.meterId, aggregation: q.aggregation,
      externalCustomerId: q.externalCustomerId, start: q.start, end: q.end ?? OPEN_END,
    })
    const value = row?.value ?? '0'
    const count = row?.event_count ?? '0'
    e.read = { value, event_count: count }
    e.count = Number(count)
    if (q.aggregation === 'MAX') e.max = count === '0' ? null : new Decimal(value)
    else if (q.aggregation === 'SUM' || q.aggregation === 'AVG') e.sum = new Decimal(value)
  }

  private evict(key: string): void {
    const e = this.entries.get(key)
    this.entries.delete(key)
    if (e) {
      this.unindex(e)
      if (e.next) this.unindex(e.next)
    }
  }

  private unindex(e: Entry): void {
    const series = e.key.split('\0').slice(0, 4).join('\0')
    const set = this.bySeries.get(series)
    set?.delete(e)
    if (set?.size === 0) this.bySeries.delete(series)
  }
}
