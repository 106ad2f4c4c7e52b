// The aggregator's writer. Consumed Kafka batches ("pieces") are coalesced and written by one
// serialized step per writer; several writers (processes, or consumers of one group) write one
// database side by side, each holding the shards of its partitions (shard-table.ts). A write:
//
//   fence (hold the shards' epochs) -> dedup (the shards' keys, in memory) -> events_raw and
//   meter_events (which merge away when written twice) -> one insert block: folded buckets + an
//   in-doubt marker per shard and month naming the write's event keys -> dedup keys -> done
//   mark -> (partition-chain.ts) offsets -> spool release
//
// A crash between any two of these is exact: before the bucket block nothing counts; after it
// the marker lets the next owner record the keys instead of counting again; after the keys
// every copy is a duplicate. docs/architecture.md, "The write path". The rows are built before
// the fence is held (write-rows.ts).
import { randomUUID } from 'node:crypto'
import type { ClickHouse } from '../clickhouse/client.js'
import { insertDedupKeys } from '../clickhouse/queries/dedup-keys.js'
import { stampedOnArrival, type IngestBatch } from '../schemas/events.js'
import type { CommittedWriteListener } from '../schemas/committed-write.js'
import type { MeterDefinition } from '../schemas/meters.js'
import { eventKey, partitionOfShard } from '../schemas/shards.js'
import { aggregatorWriteStepSeconds } from '../platform/metrics.js'
import { newEvents } from './dedup-step.js'
import type { MeterCache } from './meter-cache.js'
import { indexMeters } from './meter-rows.js'
import type { Piece, PieceResult } from './piece.js'
import { FencedError, type Cut, type WriteId } from './shard-fence.js'
import type { ShardState, ShardTable } from './shard-table.js'
import { eventRefs, writeRows, type EventRef, type KeyedEvent, type WriteRows } from './write-rows.js'

export type { Piece, PieceRecord, PieceResult } from './piece.js'

export interface WriteStats {
  writes: number
  events: number
  rawRows: number
  meterEventRows: number
  bucketRowsIn: number
  bucketRowsOut: number
  keyRows: number
  /** microseconds spent per stage, summed */
  us: { fence: number; build: number; insert: number; keys: number; done: number }
}

export interface WriteStageHooks {
  /** after the bucket block (and the raw and meter-event rows), before the dedup keys */
  afterBuckets?: () => Promise<void> | void
  /** after the dedup keys, before the done mark */
  afterKeys?: () => Promise<void> | void
  /** after the fence check, before anything is written (a paused writer) */
  afterFence?: () => Promise<void> | void
  /** runs beside the raw and meter-event inserts (one of them failing) */
  besideInserts?: () => Promise<void> | void
}

/** Events of shards this writer does not hold (an older record, a changed partition count). */
export type Reroute = (batch: IngestBatch) => Promise<void>

interface Pending {
  piece: Piece
  resolve: (r: PieceResult) => void
  reject: (err: unknown) => void
}

export class WriteStage {
  private pending: Pending[] = []
  private pendingEvents = 0
  private timer: NodeJS.Timeout | undefined
  private tail: Promise<void> = Promise.resolve()
  private stopped = false
  readonly stats: WriteStats = {
    writes: 0, events: 0, rawRows: 0, meterEventRows: 0, bucketRowsIn: 0, bucketRowsOut: 0, keyRows: 0,
    us: { fence: 0, build: 0, insert: 0, keys: 0, done: 0 },
  }

  constructor(
    private readonly ch: ClickHouse,
    readonly shards: ShardTable,
    private readonly meters: MeterCache,
    private readonly opts: {
      maxEvents?: number
      maxDelayMs?: number
      hooks?: WriteStageHooks
      reroute?: Reroute
      /** partitions of the events topic: shard s is read from partition s mod this */
      partitions?: number
      onCommittedWrite?: CommittedWriteListener
      log?: (msg: string, err?: unknown) => void
    } = {},
  ) {}

  add(piece: Piece): Promise<PieceResult> {
    if (this.stopped) return Promise.reject(new Error('the write stage is stopping'))
    const done = new Promise<PieceResult>((resolve, reject) => this.pending.push({ piece, resolve, reject }))
    this.pendingEvents += piece.records.reduce((n, r) => n + r.batch.events.length, 0)
    if (this.pendingEvents >= (this.opts.maxEvents ?? 20_000)) this.schedule()
    else this.timer ??= setTimeout(() => this.schedule(), this.opts.maxDelayMs ?? 20)
    return done
  }

  /** Between writes: takes the assigned shards and records cuts for new meters, also when idle. */
  tick(): Promise<void> {
    const run = this.tail.then(async () => {
      if (this.stopped) return
      await this.refreshMeters()
      // Dirty shards are recovered first: a cut recorded while a write is in doubt would give its
      // events to neither the backfill (no keys yet) nor the replay (the keys recovered later
      // make them duplicates).
      await this.shards.ensure([...this.shards.unclaimed(), ...this.shards.owned.keys()])
      await this.recordCuts([...this.shards.owned.values()])
    })
    this.tail = run.catch(() => undefined)
    return run
  }

  /**
   * Shutdown: the write in progress completes; everything not yet started fails, so its offsets
   * stay uncommitted and it is replayed.
   */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    this.timer = undefined
    const abandoned = this.pending
    this.pending = []
    this.pendingEvents = 0
    for (const p of abandoned) p.reject(new Error('the write stage is stopping'))
    await this.tail
  }

  async drain(): Promise<void> {
    while (this.pending.length || this.queued) {
      if (this.pending.length) this.schedule()
      await this.tail
    }
  }

  private queued = false

  /**
   * Queues one write after the one in progress; it takes everything pending when it starts, so
   * pieces that arrive while a write runs join the next one (writes grow with the load).
   */
  private schedule(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.queued) return
    this.queued = true
    this.tail = this.tail.then(() => {
      this.queued = false
      const batch = this.pending
      this.pending = []
      this.pendingEvents = 0
      return batch.length ? this.write(batch) : undefined
    })
  }

  private async write(batch: Pending[]): Promise<void> {
    if (this.stopped) {
      for (const p of batch) p.reject(new Error('the write stage is stopping'))
      return
    }
    try {
      const results = await this.writePieces(batch.map((p) => p.piece))
      batch.forEach((p, i) => p.resolve(results[i]))
    } catch (err) {
      if (err instanceof FencedError) this.shards.fencedOut(err.shards)
      for (const p of batch) p.reject(err)
    }
  }

  private sourceDown = false

  /** With Postgres down the meters keep their last known definitions; only a first load must succeed. */
  private async refreshMeters(force = false): Promise<void> {
    try {
      await this.meters.refresh(force)
      if (this.sourceDown) this.opts.log?.('meter definitions readable again')
      this.sourceDown = false
    } catch (err) {
      if (!this.meters.loaded) throw err
      if (!this.sourceDown) this.opts.log?.('meter definitions cannot be refreshed; using the last known ones', err)
      this.sourceDown = true
    }
  }

  /**
   * A meter joins a shard's live path at a cut: the shard's next write. Cuts are recorded (and
   * committed) before that write, so a write either counts the meter or precedes its cut, and
   * the backfill takes exactly the events counted before the cut (backfill.ts).
   */
  private async recordCuts(states: ShardState[]): Promise<void> {
    const defs = this.meters.all
    const cuts: Cut[] = []
    for (const s of states) {
      if (s.dirty) continue
      for (const m of defs) if (!s.cuts.has(m.id)) cuts.push({ meterId: m.id, shard: s.shard, epoch: s.epoch, seq: s.nextSeq })
    }
    if (cuts.length === 0) return
    const epochs = new Map([...new Set(cuts.map((c) => c.shard))].map((shard) => [shard, this.shards.owned.get(shard)!.epoch]))
    await this.shards.fence.hold(epochs, (sql) => this.shards.fence.recordCuts(sql, cuts))
    // A cut recorded earlier by another owner stays; re-read what holds now.
    const recorded = await this.shards.fence.cuts([...epochs.keys()])
    for (const c of recorded) this.shards.owned.get(c.shard)?.cuts.set(c.meterId, { epoch: c.epoch, seq: c.seq })
  }

  /** the index of `meters.all`, rebuilt only when the cache loads a new list */
  private indexed: { of: MeterDefinition[]; ids: Set<string>; index: Map<string, MeterDefinition[]> } | undefined

  /** The meters a shard counts: those with a cut in it whose definition is known. */
  private async meterIndex(states: ShardState[]): Promise<Map<string, MeterDefinition[]>> {
    const current = () => {
      const all = this.meters.all
      if (this.indexed?.of !== all) this.indexed = { of: all, ids: new Set(all.map((m) => m.id)), index: indexMeters(all) }
      return this.indexed
    }
    const missing = states.some((s) => [...s.cuts.keys()].some((id) => !current().ids.has(id)))
    // A cut names a meter this writer has not loaded yet: never count without it.
    if (missing) await this.refreshMeters(true)
    return current().index
  }

  private async writePieces(pieces: Piece[]): Promise<PieceResult[]> {
    const t0 = performance.now()
    const startedMs = Date.now()
    await this.refreshMeters()
    const { results, refs, touched } = eventRefs(pieces)
    await this.shards.ensure([...touched])
    const mine = refs.filter((r) => this.shards.owned.has(r.shard))
    await this.sendOnForeign(refs)
    const states = [...new Set(mine.map((r) => r.shard))].map((s) => this.shards.owned.get(s)!)
    await this.recordCuts(states)
    const index = await this.meterIndex(states)
    const writeIds = new Map<number, WriteId>(states.map((s) => [s.shard, { shard: s.shard, epoch: s.epoch, seq: s.nextSeq++ }]))
    const fresh = await this.dedup(mine)
    const rows = writeRows(fresh, index, writeIds, Boolean(this.opts.onCommittedWrite))
    const t1 = performance.now()
    const { t2, t3, t4, visibleFrom, visibleMs } = await this.insertFenced(states, fresh, rows, writeIds, t1)
    const t5 = performance.now()
    this.countWrite(refs.length, rows, [t0, t1, t2, t3, t4, t5])
    this.publish(writeIds, rows, visibleFrom)
    for (const r of results) r.timing = { startedMs, visibleMs }
    return results
  }

  /** Events of shards this writer does not hold: left to their new owner, or sent on to it. */
  private async sendOnForeign(refs: EventRef[]): Promise<void> {
    const foreign = new Map<string, IngestBatch>()
    const partitions = this.opts.partitions
    for (const r of refs) {
      if (this.shards.owned.has(r.shard)) continue
      if (this.shards.wasTaken(r.shard) && partitions && r.partition === partitionOfShard(r.shard, partitions)) {
        // Its new owner reads this very partition: leave the event to it.
        r.result.takenOver = (r.result.takenOver ?? 0) + 1
        continue
      }
      // Not ours: sent on to the partition of its shard (its owner counts it), not counted here.
      const key = `${r.batch.batch_id}\u0000${r.batch.tenant_id}\u0000${r.batch.environment_id}`
      const b = foreign.get(key) ?? { ...r.batch, events: [] }
      b.events.push(r.e)
      foreign.set(key, b)
      r.result.events++
    }
    if (foreign.size) {
      if (!this.opts.reroute) throw new Error(`events of shards this writer does not hold arrived (${[...foreign.values()].reduce((n, b) => n + b.events.length, 0)}); no reroute configured`)
      for (const b of foreign.values()) await this.opts.reroute(b)
    }
  }

  /** The new events among this writer's (`mine`), with their dedup keys. */
  private async dedup(mine: EventRef[]): Promise<KeyedEvent[]> {
    // Dedup: the hot window's boundary is taken once for the whole write, and keys older than
    // it leave memory only here, between writes, when every key counted so far is written.
    const hotFrom = this.shards.hotFrom()
    this.shards.evict(hotFrom)
    const items = mine.map((ref) => {
      ref.result.events++
      const { batch, e } = ref
      const stamped = stampedOnArrival(batch, e)
      return {
        ref, result: ref.result, state: this.shards.owned.get(ref.shard)!, ms: e.timestamp,
        key: eventKey(batch.tenant_id, batch.environment_id, e.event_id, stamped ? undefined : e.timestamp),
        keepMinute: this.shards.keepMinute(e.timestamp, stamped),
      }
    })
    return newEvents(this.ch, items, { hotFrom, keepFromDay: this.shards.keepFrom() })
  }

  /**
   * The rows, under the fence of the write's shards: raw and meter-event rows, the bucket block
   * (with its markers), the dedup keys, the done mark. Returns when each stage ended.
   */
  private async insertFenced(states: ShardState[], fresh: KeyedEvent[], rows: WriteRows, writeIds: Map<number, WriteId>, t1: number) {
    const { raw, meterEvents, buckets, keyRows } = rows
    const epochs = new Map(states.map((s) => [s.shard, s.epoch]))
    /** the bucket block (with its markers) was sent: it may be in, whatever its caller heard */
    let sent = false
    let bucketBlock: Promise<void> = Promise.resolve()
    const counted = () => {
      // A copy arriving later (even if the keys below fail) is a duplicate.
      for (const { state, key, keepMinute } of fresh) state.keys.add(key, keepMinute)
    }
    const queryId = `meterline-buckets-${randomUUID()}`
    let t2 = t1, t3 = t1, t4 = t1
    let visibleFrom = 0
    let visibleMs = 0
    try {
      await this.shards.fence.hold(epochs, async (sql) => {
        t2 = performance.now()
        await this.opts.hooks?.afterFence?.()
        // The raw and meter-event rows first: they merge away when a replay writes them again,
        // and once the bucket block (with its markers) is in, the events count and are never
        // written again, so their rows must already be there (backfills and audits read them).
        await Promise.all([
          this.ch.insertCompact('events_raw', raw),
          this.ch.insertCompact('meter_events', meterEvents),
          Promise.resolve().then(() => this.opts.hooks?.besideInserts?.()),
        ])
        visibleFrom = Date.now()
        sent = true
        bucketBlock = this.ch.insertOneBlock('meter_buckets', buckets, queryId).then(counted, async (err: unknown) => {
          // A reset after the server committed, or a timeout while it completes: the fence is
          // held until the block can land no more, so that whoever reads the markers next (this
          // writer's recovery, or a taker) sees it if it is in.
          await this.ch.settle(queryId, this.opts.log)
          throw err
        })
        await bucketBlock
        t3 = performance.now()
        visibleMs = Date.now()
        await this.opts.hooks?.afterBuckets?.()
        await insertDedupKeys(this.ch, keyRows)
        await this.opts.hooks?.afterKeys?.()
        t4 = performance.now()
        await this.shards.fence.markDone(sql, [...writeIds.values()])
      })
    } catch (err) {
      // Once the bucket block was sent it may be in, and its markers with it: the shards are
      // recovered from the markers (their keys recorded) before they write again, so a replay
      // finds every event the block counted.
      await bucketBlock.catch(() => undefined)
      if (sent) for (const s of states) s.dirty = true
      throw err
    }
    return { t2, t3, t4, visibleFrom, visibleMs }
  }

  /** The write's buckets to the committed-write listener (the live counters). */
  private publish(writeIds: Map<number, WriteId>, { committedBuckets }: WriteRows, visibleFrom: number): void {
    if (this.opts.onCommittedWrite && committedBuckets.length) {
      this.opts.onCommittedWrite({
        writes: [...writeIds.values()].map((w) => ({ shard: w.shard, epoch: w.epoch.toString(), seq: w.seq.toString() })),
        buckets: committedBuckets,
        visible_from: visibleFrom,
      })
    }
  }

  /** The write's rows and the microseconds of each stage, added to the stats. */
  private countWrite(events: number, rows: WriteRows, [t0, t1, t2, t3, t4, t5]: number[]): void {
    const st = this.stats
    st.writes++
    st.events += events
    st.rawRows += rows.raw.length
    st.meterEventRows += rows.meterEvents.length
    st.bucketRowsIn += rows.folder.rowsIn
    st.bucketRowsOut += rows.folder.size
    st.keyRows += rows.keyRows.length
    // each step once: summed in the stats (`build` there) and observed in the histogram
    const steps: [keyof WriteStats['us'], string, number][] = [
      ['build', 'prepare', t1 - t0], ['fence', 'fence', t2 - t1], ['insert', 'insert', t3 - t2], ['keys', 'keys', t4 - t3], ['done', 'done', t5 - t4],
    ]
    for (const [stat, step, ms] of steps) {
      st.us[stat] += Math.round(ms * 1000)
      aggregatorWriteStepSeconds.observe({ step }, ms / 1000)
    }
  }
}
