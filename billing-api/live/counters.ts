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
// - a write received after a read ended may still be in it: the write is published only after
//   its dedup keys and Postgres record follow its bucket insert. A write whose insert began
//   (visible_from) before the read ended, plus a clock margin, is not added: the counter is read
//   again (behind, never ahead). Without visible_from (older publishers) it is added, as before.
// Scope loads (LIVE_COUNTER_SCOPE_LOAD): the counters of SUM, COUNT, MAX and AVG meters are held
// per scope, one (meter, reset period): once a second customer misses a counter of the same
// scope, one statement reads every customer of it (GROUP BY customer over the buckets) and
// concurrent misses wait for that one read; a customer it does not return has no usage (zero),
// and a later write for such a customer starts its counter from zero. The same rules, per
// customer: a write received while the scope's read runs marks the customers it touches as in
// doubt (not added; behind, never ahead); they are read again, all of a scope's doubtful
// customers in one statement, when a check asks for one, and answer meanwhile with the
// usage_as_of their value is complete to. A first miss of a scope still reads its one counter
// (a period no other customer shares, e.g. anniversary periods, would cost a read of the whole
// meter for one customer).
import { Decimal } from 'decimal.js'
import type { CommittedWrite } from '../../schemas/committed-write.js'
import type { UsageReader } from '../context.js'
import { liveCounterEvents, liveCounterReadSeconds } from './metrics.js'

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
  /** wall-clock ms when its read returned */
  readEnd: number
  /** the entry that replaces this one once its read finished */
  next?: Entry
}

/**
 * Usage of one customer in a scope; customers without usage have none. `v` is the sum (SUM,
 * AVG) or the maximum (MAX; unused for COUNT), a JS number while it is a safe integer (about 60
 * bytes a counter against 310 with a Decimal, measured on the heap: 100,000 customers x 20 meters
 * are 2,000,000 of these), else a Decimal: exact either way.
 */
interface Usage {
  v: Quantity
  count: number
}
type Quantity = number | Decimal

/** The counters of every customer of one (meter, reset period, aggregation), from one read. */
interface Scope {
  key: string
  meterKey: string
  q: CounterQuery
  start: number
  end: number
  generation: number
  /** the first read runs: checks wait for it */
  loading: boolean
  ready: Promise<void>
  /** high-water marks when the last whole read started */
  fence: Map<string, bigint>
  /** usage_as_of when the last whole read started (an inactive meter's counters report null) */
  asOf: number | null
  inactive: boolean
  /** wall-clock ms when its latest read (whole or re-read) returned */
  readEnd: number
  /** customers with usage in the period; absent: zero */
  usage: Map<string, Usage>
  /** customers whose value may miss a write, with the usage_as_of their value is complete to */
  dirty: Map<string, number | null>
  /** customers a write touched while a read of them ran: the read may or may not hold it */
  doubt: Set<string>
  /** the read running besides the first one: every customer (the meter was inactive) or the doubtful ones */
  rereading: Set<string> | 'all' | null
}

const MAX_SAFE = new Decimal(Number.MAX_SAFE_INTEGER)
const quantity = (d: Decimal): Quantity => (d.isInteger() && d.abs().lte(MAX_SAFE) ? d.toNumber() : d)
const parseQuantity = (text: string): Quantity => {
  const n = Number(text)
  return Number.isSafeInteger(n) && String(n) === text ? n : quantity(new Decimal(text))
}
const quantityText = (q: Quantity): string => (typeof q === 'number' ? String(q) : q.toFixed())
const plus = (a: Quantity, text: string): Quantity => {
  const n = Number(text)
  if (typeof a === 'number' && Number.isSafeInteger(n) && String(n) === text && Number.isSafeInteger(a + n)) return a + n
  return quantity(new Decimal(a).plus(text))
}
const larger = (a: Quantity, text: string): Quantity => (new Decimal(a).lt(text) ? parseQuantity(text) : a)
/** doubtful customers of one scope read again in one statement */
const REREAD_MAX = 10_000
/** scopes with one miss remembered (the second miss loads the scope) */
const MISSED_MAX = 100_000

/** meter series of a bucket or a query: tenant \0 environment \0 meter \0 customer */
export const seriesKey = (t: string, e: string, m: string, c: string) => `${t}\0${e}\0${m}\0${c}`
const entryKey = (q: CounterQuery) =>
  `${seriesKey(q.tenantId, q.environmentId, q.meterId, q.externalCustomerId)}\0${q.start.getTime()}\0${q.end?.getTime() ?? ''}\0${q.aggregation}`
const OPEN_END = new Date('2100-01-01T00:00:00Z')
const meterKeyOf = (q: Pick<CounterQuery, 'tenantId' | 'environmentId' | 'meterId'>) => `${q.tenantId}\0${q.environmentId}\0${q.meterId}`
const scopeKeyOf = (q: CounterQuery) => `${meterKeyOf(q)}\0${q.start.getTime()}\0${q.end?.getTime() ?? ''}\0${q.aggregation}`
const sameUsage = (a: Usage | undefined, b: Usage | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.count === b.count && quantityText(a.v) === quantityText(b.v))

export class LiveCounters {
  private readonly entries = new Map<string, Entry>()
  private readonly bySeries = new Map<string, Set<Entry>>()
  private readonly scopes = new Map<string, Scope>()
  private readonly scopesByMeter = new Map<string, Set<Scope>>()
  /** scope key -> the customer that missed it first */
  private readonly missed = new Map<string, string>()
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
    /** read a scope's counters in one statement (LIVE_COUNTER_SCOPE_LOAD) */
    private readonly scopeLoad = true,
    /** clock difference allowed between the aggregator's process and this one (visible_from) */
    private readonly clockMarginMs = 50,
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
    this.scopes.clear()
    this.scopesByMeter.clear()
    this.missed.clear()
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
    // Its insert began before a read ended (plus the margin): that read may hold it.
    const maybeIn = (readEnd: number) => w.visible_from !== undefined && w.visible_from <= readEnd + this.clockMarginMs
    for (const b of w.buckets) {
      const series = seriesKey(b.tenant_id, b.environment_id, b.meter_id, b.external_customer_id)
      touched.add(series)
      const t = b.bucket_start * 1000
      const scopes = this.scopesByMeter.get(meterKeyOf({ tenantId: b.tenant_id, environmentId: b.environment_id, meterId: b.meter_id }))
      if (scopes) {
        for (const s of scopes) {
          if (t + MINUTE <= s.start || t >= s.end) continue
          const c = b.external_customer_id
          if (s.loading) {
            s.doubt.add(c)
            continue
          }
          if (s.rereading === 'all' || s.rereading?.has(c)) s.doubt.add(c)
          // Part of it applied elsewhere, or an edge minute: read again (never ahead).
          if (replayed > 0 || t < s.start || t + MINUTE > s.end) {
            if (!s.dirty.has(c)) s.dirty.set(c, this.asOf)
            continue
          }
          if (ids.every((x) => x.seq <= (s.fence.get(x.k) ?? -1n))) continue // in the base
          if (maybeIn(s.readEnd)) {
            if (!s.dirty.has(c)) s.dirty.set(c, this.asOf)
            continue
          }
          const agg = s.q.aggregation
          const u = s.usage.get(c)
          if (!u) {
            s.usage.set(c, { v: agg === 'MAX' ? parseQuantity(b.value_max) : agg === 'COUNT' ? 0 : parseQuantity(b.value_sum), count: b.event_count })
            continue
          }
          if (agg === 'SUM' || agg === 'AVG') u.v = plus(u.v, b.value_sum)
          else if (agg === 'MAX') u.v = larger(u.v, b.value_max)
          u.count += b.event_count
        }
      }
      const set = this.bySeries.get(series)
      if (!set) continue
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
        if (maybeIn(e.readEnd)) {
          e.dirty = true
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

  /**
   * The usage_as_of a read of this meter straight from the buckets may claim, asked before it
   * starts: null while the meter's backfill runs (its buckets hold part of its earlier events).
   */
  async readAsOf(meterId: string): Promise<number | null> {
    return (await this.isActive(meterId)) ? this.asOf : null
  }

  async get(q: CounterQuery): Promise<CounterValue> {
    if (this.scopeLoad && FROM_MEMORY.has(q.aggregation)) {
      const s = this.scopeOf(q)
      if (s) return this.fromScope(s, q.externalCustomerId)
    }
    const k = entryKey(q)
    let e = this.entries.get(k)
    if (e && e.generation !== this.generation) e = undefined
    if (!e) {
      e = this.load(q, k)
      this.entries.set(k, e)
      this.trim()
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

  /** counters held: one per entry, one per customer with usage in a scope */
  get size(): number {
    let n = this.entries.size
    for (const s of this.scopes.values()) n += Math.max(1, s.usage.size)
    return n
  }

  /** The scope of a counter: held, loading, or loaded now because a second customer missed it. */
  private scopeOf(q: CounterQuery): Scope | undefined {
    const k = scopeKeyOf(q)
    const s = this.scopes.get(k)
    if (s && s.generation === this.generation) {
      this.scopes.delete(k)
      this.scopes.set(k, s)
      return s
    }
    if (s) this.dropScope(s)
    const first = this.missed.get(k)
    if (first === undefined || first === q.externalCustomerId) {
      this.missed.set(k, q.externalCustomerId)
      if (this.missed.size > MISSED_MAX) this.missed.delete(this.missed.keys().next().value!)
      return undefined
    }
    this.missed.delete(k)
    const fresh = this.loadScope(q, k)
    this.trim(fresh)
    return fresh
  }

  private loadScope(q: CounterQuery, key: string): Scope {
    liveCounterEvents.inc({ event: 'scope_load' })
    const s: Scope = {
      key, meterKey: meterKeyOf(q), q, start: q.start.getTime(), end: (q.end ?? OPEN_END).getTime(), generation: this.generation,
      loading: true, ready: Promise.resolve(), fence: new Map(this.hwm), asOf: this.asOf, inactive: false, readEnd: Infinity,
      usage: new Map(), dirty: new Map(), doubt: new Set(), rereading: null,
    }
    this.scopes.set(key, s)
    if (!this.scopesByMeter.has(s.meterKey)) this.scopesByMeter.set(s.meterKey, new Set())
    this.scopesByMeter.get(s.meterKey)!.add(s)
    s.ready = (async () => {
      // Activation first: a meter active before the read started has its backfill in the buckets.
      s.inactive = !(await this.isActive(q.meterId))
      s.usage = await this.readScope(s, 'scope')
      for (const c of s.doubt) s.dirty.set(c, s.asOf)
      s.doubt.clear()
    })().finally(() => {
      s.loading = false
    })
    s.ready.then(() => this.trim(s), () => {
      // A failed read is not kept: the next check reads again.
      if (this.scopes.get(key) === s) this.dropScope(s)
    })
    return s
  }

  /** One statement: the usage of every customer of the scope (or of `customers`) with usage. */
  private async readScope(s: Scope, kind: 'scope' | 'reread', customers?: string[]): Promise<Map<string, Usage>> {
    const { q } = s
    const timer = liveCounterReadSeconds.startTimer({ kind })
    const rows = await this.read({
      tenantId: q.tenantId, environmentId: q.environmentId, meterId: q.meterId, aggregation: q.aggregation,
      start: q.start, end: q.end ?? OPEN_END, byCustomer: true, ...(customers ? { externalCustomerIds: customers } : {}),
    })
    timer()
    s.readEnd = s.readEnd === Infinity ? Date.now() : Math.max(s.readEnd, Date.now())
    const out = new Map<string, Usage>()
    for (const r of rows) {
      if (r.customer === undefined || r.event_count === '0') continue
      out.set(r.customer, { v: q.aggregation === 'COUNT' ? 0 : parseQuantity(r.value), count: Number(r.event_count) })
    }
    return out
  }

  private async fromScope(s: Scope, customer: string): Promise<CounterValue> {
    if (s.loading) await s.ready
    if ((s.inactive || s.dirty.has(customer)) && s.rereading === null && this.scopes.get(s.key) === s) void this.reread(s)
    const u = s.usage.get(customer)
    // A meter whose backfill runs holds part of its earlier events whatever the time: no instant is true of it.
    const asOf = s.inactive ? null : s.dirty.has(customer) ? (s.dirty.get(customer) ?? null) : this.asOf
    const agg = s.q.aggregation
    if (!u) return { value: '0', event_count: '0', asOf }
    const value = agg === 'COUNT' ? String(u.count) : quantityText(u.v)
    return { value, event_count: String(u.count), asOf }
  }

  /**
   * Reads a scope's doubtful customers again in one statement (every customer while its meter
   * is not active yet); the values held serve until it finished.
   */
  private async reread(s: Scope): Promise<void> {
    const all = s.inactive
    const targets: Set<string> | 'all' = all ? 'all' : new Set([...s.dirty.keys()].slice(0, REREAD_MAX))
    liveCounterEvents.inc({ event: 'scope_reread' })
    s.rereading = targets
    s.doubt = new Set()
    const fence = new Map(this.hwm)
    const asOf = this.asOf
    try {
      const inactive = all ? !(await this.isActive(s.q.meterId)) : s.inactive
      const fresh = await this.readScope(s, 'reread', targets === 'all' ? undefined : [...targets])
      if (this.scopes.get(s.key) !== s || s.generation !== this.generation) return
      const changed: string[] = []
      if (targets === 'all') {
        for (const c of new Set([...s.usage.keys(), ...fresh.keys()])) if (!sameUsage(s.usage.get(c), fresh.get(c))) changed.push(c)
        s.usage = fresh
        s.dirty.clear()
        s.fence = fence
        s.asOf = asOf
        s.inactive = inactive
      } else {
        for (const c of targets) {
          const u = fresh.get(c)
          if (!sameUsage(s.usage.get(c), u)) changed.push(c)
          if (u) s.usage.set(c, u)
          else s.usage.delete(c)
          s.dirty.delete(c)
        }
      }
      // Touched while this read ran: it may or may not hold those writes.
      for (const c of s.doubt) s.dirty.set(c, asOf)
      // The value may have moved without a write (a backfill, a missed write): caps look again.
      if (changed.length) this.onApplied?.(new Set(changed.map((c) => `${s.meterKey}\0${c}`)))
    } catch {
      // Kept dirty: the next check reads again.
    } finally {
      s.rereading = null
      s.doubt = new Set()
    }
  }

  private dropScope(s: Scope): void {
    if (this.scopes.get(s.key) === s) this.scopes.delete(s.key)
    const set = this.scopesByMeter.get(s.meterKey)
    set?.delete(s)
    if (set?.size === 0) this.scopesByMeter.delete(s.meterKey)
  }

  /** Least recently used first: single counters, then whole scopes (never `keep`). */
  private trim(keep?: Scope): void {
    let size = this.size
    while (size > this.maxEntries && this.entries.size > 0) {
      this.evict(this.entries.keys().next().value!)
      size--
    }
    for (const s of this.scopes.values()) {
      if (size <= this.maxEntries) break
      if (s === keep) continue
      size -= Math.max(1, s.usage.size)
      this.dropScope(s)
    }
  }

  private valueOf(e: Entry): CounterValue {
    const asOf = e.inactive ? null : e.dirty || e.stale ? e.asOf : this.asOf
    if (!e.memory) return { ...e.read, asOf }
    const agg = e.q.aggregation
    const value = agg === 'COUNT' ? String(e.count) : agg === 'MAX' ? (e.max ?? new Decimal(0)).toFixed() : e.sum.toFixed()
    return { value, event_count: String(e.count), asOf }
  }

  private newEntry(q: CounterQuery, key: string): Entry {
    const e: Entry = {
      q, key, start: q.start.getTime(), end: (q.end ?? OPEN_END).getTime(), memory: FROM_MEMORY.has(q.aggregation),
      loading: true, ready: Promise.resolve(), sum: new Decimal(0), count: 0, max: null, read: { value: '0', event_count: '0' },
      fence: new Map(this.hwm), dirty: false, stale: false, inactive: false, asOf: this.asOf, generation: this.generation, readEnd: Infinity,
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
    const timer = liveCounterReadSeconds.startTimer({ kind: 'counter' })
    const [row] = await this.read({
      tenantId: q.tenantId, environmentId: q.environmentId, meterId: q.meterId, aggregation: q.aggregation,
      externalCustomerId: q.externalCustomerId, start: q.start, end: q.end ?? OPEN_END,
    })
    timer()
    e.readEnd = Date.now()
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
