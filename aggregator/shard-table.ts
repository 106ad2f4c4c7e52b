// The shards this writer holds: for each, its epoch, the next write's sequence, the dedup keys
// of its hot window in memory and the meter cuts that apply to it. Taking a shard (claim) waits
// for the previous owner's write in flight, moves the epoch, finishes the previous owner's
// in-doubt writes from their markers, and loads the keys of the shard's hot window. See
// docs/architecture.md, "The write path" and "Dedup keys in memory and on disk".
import type { ClickHouse } from '../clickhouse/client.js'
import { forEachShardKey, insertDedupKeys, KeyStreamError, type DedupKeyRow } from '../clickhouse/queries/dedup-keys.js'
import { markersAfter } from '../clickhouse/queries/write-markers.js'
import { GROUP_SESSION_TIMEOUT_MS } from '../platform/kafka.js'
import { aggregatorShardLoadFailures } from '../platform/metrics.js'
import { checkText, keyText } from '../schemas/shards.js'
import { dayOf, KeySet, minuteOf } from './key-set.js'
import type { ShardFence } from './shard-fence.js'

export interface ShardState {
  shard: number
  epoch: bigint
  nextSeq: bigint
  /** the keys of events from the hot window's start on, and of every event counted since the last eviction */
  keys: KeySet
  /** keys of events before this minute have been evicted (written to dedup_events first) */
  evictedBelow: number
  /** a write failed after its bucket insert: its keys must be recorded before the next write */
  dirty: boolean
  /** meter id -> the first write (epoch, seq) of this shard that counts it */
  cuts: Map<string, { epoch: bigint; seq: bigint }>
}

/** twice the group's session: a writer that missed a rebalance has heard of it by then */
const RECLAIM_AFTER_MS = 2 * GROUP_SESSION_TIMEOUT_MS

export class ShardTable {
  readonly owned = new Map<number, ShardState>()
  /** shards given up (reassigned); kept to be taken back cheaply when nobody wrote them since */
  private readonly parked = new Map<number, ShardState>()
  /** shards the consumer group assigned to this writer (claimed on their first write or tick) */
  private assigned = new Set<number>()
  /**
   * Fenced out, and when: not claimed again before the group assigns them anew, or before
   * RECLAIM_AFTER_MS passed without a new assignment. A writer that missed a rebalance learns
   * of it within the group's session; one still assigned after that was fenced out by a claim
   * the group had already overruled (it landed late), and nobody else writes those shards.
   */
  private readonly lost = new Map<number, number>()

  constructor(
    private readonly ch: ClickHouse,
    readonly fence: ShardFence,
    private readonly log: (msg: string, err?: unknown) => void,
    /** days of event time whose keys are kept; 0: every key */
    private readonly horizonDays = 0,
    /** keys read per statement at a takeover */
    private readonly keyPageSize = 500_000,
    /** events this recent (and later) are checked in memory; older ones in dedup_events */
    private readonly hotWindowMs = 30 * 60_000,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * The first event day whose copies are still recognised. An event before it was refused by
   * ingest (older than its acceptance window) unless it waited that margin in the pipeline; it
   * is not counted (write-stage.ts), since a copy of it may no longer be known.
   */
  readonly keepFrom = (): number => (this.horizonDays > 0 ? dayOf(this.clock()) - this.horizonDays : 0)

  private hotStart = 0

  /**
   * The hot window's start (ms): events at or after it are checked in memory alone, earlier ones
   * in memory and then in dedup_events. Computed once per write and never moving back, whatever
   * the clock does: memory holds every key from here on, so a boundary that moved back would
   * take events for hot whose keys were evicted.
   */
  hotFrom(): number {
    this.hotStart = Math.max(this.hotStart, this.clock() - this.hotWindowMs)
    return this.hotStart
  }

  /**
   * The minute a counted key stays in memory for: its event's. An event sent without a timestamp
   * stays at least the window from when it is counted, so a resend (stamped anew on arrival)
   * that reaches a lagging aggregator right after it is still recognised; the dedup store finds
   * it only under its own timestamp.
   */
  keepMinute(ms: number, stamped: boolean): number {
    return stamped ? Math.max(minuteOf(ms), minuteOf(this.hotStart + this.hotWindowMs)) : minuteOf(ms)
  }

  /**
   * Between writes (every key written to dedup_events, or the shard dirty and not evicted):
   * drops the keys of events before the window's minute, once per minute the window moved, in
   * at most `perCall` shards (a rebuild costs time in proportion to the keys: spread over writes).
   */
  evict(hotFrom: number, perCall = 8): void {
    const minute = minuteOf(hotFrom)
    let done = 0
    for (const s of this.owned.values()) {
      if (s.dirty || s.evictedBelow >= minute) continue
      s.keys.evictBefore(minute)
      s.evictedBelow = minute
      if (++done >= perCall) return
    }
  }

  /** The group's assignment changed: shards not in it are given up at once. */
  assign(shards: Iterable<number>): void {
    this.assigned = new Set(shards)
    this.lost.clear()
    for (const [shard, state] of this.owned) {
      if (!this.assigned.has(shard)) {
        this.owned.delete(shard)
        this.parked.set(shard, state)
      }
    }
  }

  /** Assigned to this writer, but another writer fenced it out since (until the next assignment). */
  wasTaken(shard: number): boolean {
    return this.isLost(shard)
  }

  isAssigned(shard: number): boolean {
    return this.assigned.has(shard) && !this.isLost(shard)
  }

  private isLost(shard: number): boolean {
    const at = this.lost.get(shard)
    if (at === undefined) return false
    if (this.clock() - at < RECLAIM_AFTER_MS) return true
    this.lost.delete(shard)
    this.log(`shard ${shard} is still assigned to this writer ${RECLAIM_AFTER_MS / 1000} s after another writer took it: taking it back`)
    return false
  }

  /** The write was refused for these shards: another writer has them now. */
  fencedOut(shards: number[]): void {
    for (const s of shards) {
      this.owned.delete(s)
      this.parked.delete(s)
      this.lost.set(s, this.clock())
    }
    this.log(`shards ${shards.join(', ')} were taken over by another writer; this writer stops writing them`)
  }

  /** Makes every given shard owned and clean (claiming and recovering as needed). */
  async ensure(shards: number[]): Promise<void> {
    const toClaim = shards.filter((s) => !this.owned.has(s) && this.isAssigned(s))
    if (toClaim.length) await this.claim(toClaim)
    for (const s of shards) {
      const state = this.owned.get(s)
      if (state?.dirty) await this.recover(state)
    }
  }

  /** Every assigned shard not yet held (the tick: cuts reach idle shards too). */
  unclaimed(): number[] {
    return [...this.assigned].filter((s) => !this.owned.has(s) && !this.isLost(s))
  }

  private async claim(shards: number[]): Promise<void> {
    const claims = await this.fence.claim(shards)
    const cuts = await this.fence.cuts(shards)
    const loads: ShardState[] = []
    const taken: ShardState[] = []
    for (const c of claims) {
      const parked = this.parked.get(c.shard)
      const kept = parked && c.previousOwner === this.fence.owner && c.previousEpoch === parked.epoch && !parked.dirty
      const state: ShardState = {
        shard: c.shard, epoch: c.epoch, nextSeq: 1n, keys: kept ? parked.keys : new KeySet(1024), evictedBelow: kept ? parked.evictedBelow : 0, dirty: true, cuts: new Map(),
      }
      for (const cut of cuts) if (cut.shard === c.shard) state.cuts.set(cut.meterId, { epoch: cut.epoch, seq: cut.seq })
      await this.finishInDoubt(state, c.doneEpoch, c.doneSeq)
      if (!kept) loads.push(state)
      taken.push(state)
    }
    // Loaded after the in-doubt writes are finished, so their keys are in.
    const hotFrom = this.hotFrom()
    for (let i = 0; i < loads.length; i += 4) {
      await Promise.all(loads.slice(i, i + 4).map((s) => this.load(s, hotFrom)))
    }
    // Owned only now, every key in: a claim that fails part-way (Postgres or ClickHouse gone)
    // leaves no shard held with a partial memory, which would count its events again. The next
    // write claims them afresh (the epoch moves once more).
    for (const state of taken) {
      this.parked.delete(state.shard)
      this.owned.set(state.shard, state)
    }
  }

  /** A shard's keys from the store into its memory; a load that fails says why (log, metric) and fails the claim. */
  private async load(s: ShardState, hotFrom: number): Promise<void> {
    try {
      await forEachShardKey(this.ch, s.shard, hotFrom, (ms, a, b, c, d) => s.keys.add({ hi1: a, hi0: b, lo1: c, lo0: d }, minuteOf(ms)), this.keyPageSize)
      s.evictedBelow = minuteOf(hotFrom)
    } catch (err) {
      const reason = err instanceof KeyStreamError ? err.reason : 'error'
      aggregatorShardLoadFailures.inc({ reason })
      this.log(`shard ${s.shard}: its dedup keys could not be loaded (${reason}); the shard is not held, and the takeover is tried again at the next write`, err)
      throw err
    }
  }

  /** The same writer failed after a bucket insert: record the keys of its own in-doubt writes. */
  private async recover(state: ShardState): Promise<void> {
    const { rows } = await this.fence.hold(new Map([[state.shard, state.epoch]]), async (sql) =>
      sql.query<{ done_epoch: string; done_seq: string }>(
        'SELECT done_epoch::text, done_seq::text FROM shard_owner WHERE store = $2 AND shard = $1', [state.shard, this.fence.store],
      ),
    )
    await this.finishInDoubt(state, BigInt(rows[0].done_epoch), BigInt(rows[0].done_seq))
  }

  /**
   * Writes whose buckets are in (their markers) but whose keys may not be: record the keys,
   * under the write's own (epoch, seq), then move the shard's done mark past them.
   */
  private async finishInDoubt(state: ShardState, doneEpoch: bigint, doneSeq: bigint): Promise<void> {
    const markers = await markersAfter(this.ch, state.shard, doneEpoch, doneSeq)
    if (markers.length) {
      const rows: DedupKeyRow[] = []
      for (const m of markers) {
        for (const { d, ms } of m.keys) {
          rows.push([state.shard, ms, keyText(d), checkText(d), m.epoch.toString(), m.seq.toString()])
          state.keys.add(d, minuteOf(ms))
        }
      }
      await insertDedupKeys(this.ch, rows)
      this.log(`shard ${state.shard}: finished ${markers.length} in-doubt writes (${rows.length} event keys) of an earlier writer`)
    }
    const last = markers[markers.length - 1]
    await this.fence.hold(new Map([[state.shard, state.epoch]]), (sql) =>
      this.fence.markDone(sql, [{ shard: state.shard, epoch: last ? last.epoch : state.epoch, seq: last ? last.seq : 0n }]),
    )
    state.dirty = false
  }
}
