// The shards this writer holds: for each, its epoch, the next write's sequence, its dedup keys
// in memory and the meter cuts that apply to it. Taking a shard (claim) waits for the previous
// owner's write in flight, moves the epoch, finishes the previous owner's in-doubt writes from
// their markers, and loads the shard's keys. See docs/architecture.md, "The write path".
import type { ClickHouse } from '../clickhouse/client.js'
import { dayText, forEachShardKey, insertDedupKeys, KeyStreamError, type DedupKeyRow } from '../clickhouse/queries/dedup-keys.js'
import { markersAfter } from '../clickhouse/queries/write-markers.js'
import { aggregatorShardLoadFailures } from '../platform/metrics.js'
import { checkText, keyText } from '../schemas/shards.js'
import { dayOf, KeySet } from './key-set.js'
import type { ShardFence } from './shard-fence.js'

export interface ShardState {
  shard: number
  epoch: bigint
  nextSeq: bigint
  keys: KeySet
  /** a write failed after its bucket insert: its keys must be recorded before the next write */
  dirty: boolean
  /** meter id -> the first write (epoch, seq) of this shard that counts it */
  cuts: Map<string, { epoch: bigint; seq: bigint }>
}

export class ShardTable {
  readonly owned = new Map<number, ShardState>()
  /** shards given up (reassigned); kept to be taken back cheaply when nobody wrote them since */
  private readonly parked = new Map<number, ShardState>()
  /** shards the consumer group assigned to this writer (claimed on their first write or tick) */
  private assigned = new Set<number>()
  /** fenced out: not claimed again before the group assigns them anew */
  private readonly lost = new Set<number>()

  constructor(
    private readonly ch: ClickHouse,
    readonly fence: ShardFence,
    private readonly log: (msg: string, err?: unknown) => void,
    /** days of event time whose keys are kept; 0: every key */
    private readonly horizonDays = 0,
    /** keys read per statement at a takeover */
    private readonly keyPageSize = 500_000,
  ) {}

  /**
   * The first event day whose copies are still recognised. An event before it was refused by
   * ingest (older than its acceptance window) unless it waited that margin in the pipeline; it
   * is not counted (write-stage.ts), since a copy of it may no longer be known.
   */
  readonly keepFrom = (): number => (this.horizonDays > 0 ? dayOf(Date.now()) - this.horizonDays : 0)

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
    return this.lost.has(shard)
  }

  isAssigned(shard: number): boolean {
    return this.assigned.has(shard) && !this.lost.has(shard)
  }

  /** The write was refused for these shards: another writer has them now. */
  fencedOut(shards: number[]): void {
    for (const s of shards) {
      this.owned.delete(s)
      this.parked.delete(s)
      this.lost.add(s)
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
    return [...this.assigned].filter((s) => !this.owned.has(s) && !this.lost.has(s))
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
        shard: c.shard, epoch: c.epoch, nextSeq: 1n, keys: kept ? parked.keys : new KeySet(1024, this.keepFrom), dirty: true, cuts: new Map(),
      }
      for (const cut of cuts) if (cut.shard === c.shard) state.cuts.set(cut.meterId, { epoch: cut.epoch, seq: cut.seq })
      await this.finishInDoubt(state, c.doneEpoch, c.doneSeq)
      if (!kept) loads.push(state)
      taken.push(state)
    }
    // Loaded after the in-doubt writes are finished, so their keys are in.
    for (let i = 0; i < loads.length; i += 4) {
      await Promise.all(loads.slice(i, i + 4).map((s) => this.load(s)))
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
  private async load(s: ShardState): Promise<void> {
    try {
      await forEachShardKey(this.ch, s.shard, this.keepFrom(), (a, b, c, d, day) => s.keys.add({ hi1: a, hi0: b, lo1: c, lo0: d }, day), this.keyPageSize)
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
      // A marker names its events' month, not their day: their keys are kept as of tomorrow,
      // at least as long as their own days would keep them.
      const day = dayOf(Date.now()) + 1
      for (const m of markers) {
        for (const d of m.digests) {
          rows.push([state.shard, keyText(d), checkText(d), m.epoch.toString(), m.seq.toString(), dayText(day)])
          state.keys.add(d, day)
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
