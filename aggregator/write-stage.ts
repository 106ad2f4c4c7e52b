// The aggregator's one writer. Consumed Kafka batches ("pieces", one per partition at a time)
// are coalesced and written by a single serialized step, so that dedup decisions and meter
// activations never race each other:
//
//   activate meters -> dedup (event_keys) -> build rows -> events_raw + meter_events
//   + meter_buckets (+ ledger rows, one insert block) -> event_keys -> resolve pieces
//
// Why each replay is exact (docs/architecture.md, "Meter buckets and exactly-once"):
// - an event whose key is in event_keys was fully written before (keys are written last);
// - buckets written for a piece whose keys were not yet written are vouched for by the ledger
//   rows of the same insert block, one per month part; the replayed piece skips those months.
import type { ClickHouse } from '../clickhouse/client.js'
import { insertEventKeys, lookupEventKeys } from '../clickhouse/queries/event-keys.js'
import { ledgerRow, readLedger, type LedgerEntry } from '../clickhouse/queries/bucket-ledger.js'
import type { IngestBatch } from '../schemas/events.js'
import type { ActiveMeters } from './active-meters.js'
import { bucketRow, eventKey, meterEventRow, meterHits, monthOf, rawRow } from './meter-rows.js'

export interface PieceRecord {
  offset: bigint
  batch: IngestBatch
}

export interface Piece {
  /** consumer group / topic / partition: the ledger's stream */
  stream: string
  first: bigint
  last: bigint
  records: PieceRecord[]
}

export interface PieceResult {
  events: number
  duplicates: number
  meterRows: number
  skipped: Record<string, number>
}

export interface WriteStageHooks {
  /** after the bucket insert and before the event keys (fault injection for tests) */
  afterBuckets?: () => Promise<void> | void
}

interface Pending {
  piece: Piece
  resolve: (r: PieceResult) => void
  reject: (err: unknown) => void
}

/** Records of a stream up to `upTo` whose months in `months` are already in the buckets. */
interface Coverage {
  upTo: bigint
  months: Map<number, LedgerEntry>
}

export class WriteStage {
  private pending: Pending[] = []
  private pendingEvents = 0
  private timer: NodeJS.Timeout | undefined
  private tail: Promise<void> = Promise.resolve()
  /** next offset expected per stream; a piece that does not continue it reloads the ledger */
  private readonly nextOffset = new Map<string, bigint>()
  private readonly coverage = new Map<string, Coverage>()
  private stopped = false

  constructor(
    private readonly ch: ClickHouse,
    private readonly meters: ActiveMeters,
    private readonly opts: { maxEvents?: number; maxDelayMs?: number; hooks?: WriteStageHooks } = {},
  ) {}

  add(piece: Piece): Promise<PieceResult> {
    if (this.stopped) return Promise.reject(new Error('the write stage is stopping'))
    const done = new Promise<PieceResult>((resolve, reject) => this.pending.push({ piece, resolve, reject }))
    this.pendingEvents += piece.records.reduce((n, r) => n + r.batch.events.length, 0)
    if (this.pendingEvents >= (this.opts.maxEvents ?? 20_000)) this.schedule()
    else this.timer ??= setTimeout(() => this.schedule(), this.opts.maxDelayMs ?? 20)
    return done
  }

  /** Runs meter activation alone (new meters get backfilled even when no events arrive). */
  tick(): Promise<void> {
    const run = this.tail.then(() => this.meters.prepare())
    // The caller gets `run` and its error; the chain only needs to go on after it.
    this.tail = run.catch(() => undefined)
    return run
  }

  /**
   * Shutdown: the write in progress completes (a process must not end between a bucket insert
   * and its event keys when the replay may come from a restarted broker at other offsets);
   * everything not yet started fails, so its offsets stay uncommitted and it is replayed.
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

  /** Resolves once everything handed in so far is written (or failed). */
  async drain(): Promise<void> {
    if (this.pending.length) this.schedule()
    await this.tail
  }

  private schedule(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    const batch = this.pending
    this.pending = []
    this.pendingEvents = 0
    if (batch.length === 0) return
    this.tail = this.tail.then(() => this.write(batch))
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
      // The pieces will be replayed from their last commit: re-read the ledger then.
      for (const p of batch) this.nextOffset.delete(p.piece.stream)
      for (const p of batch) p.reject(err)
    }
  }

  private async loadCoverage(pieces: Piece[]): Promise<void> {
    const reload = pieces.filter((p) => this.nextOffset.get(p.stream) !== p.first)
    if (reload.length === 0) return
    const ledger = await readLedger(this.ch, reload.map((p) => p.stream))
    for (const p of reload) {
      this.coverage.delete(p.stream)
      const months = new Map<number, LedgerEntry>()
      let upTo = -1n
      for (const [month, entry] of ledger.get(p.stream) ?? []) {
        // Only the last piece written before a crash can be replayed, and it starts where the replay starts.
        if (entry.first === p.first && entry.batchId === p.records[0].batch.batch_id) {
          months.set(month, entry)
          if (entry.last > upTo) upTo = entry.last
        }
      }
      if (months.size) this.coverage.set(p.stream, { upTo, months })
    }
  }

  private async writePieces(pieces: Piece[]): Promise<PieceResult[]> {
    await this.meters.prepare()
    await this.loadCoverage(pieces)
    const index = this.meters.index

    // Dedup: against earlier writes (event_keys) and within this write (first occurrence wins).
    const keys: { key: string; check: string }[][][] = pieces.map((p) =>
      p.records.map((r) => r.batch.events.map((e) => eventKey(r.batch.tenant_id, r.batch.environment_id, e.event_id))),
    )
    const present = await lookupEventKeys(this.ch, [...new Set(keys.flat(2).map((k) => k.key))])
    const claimed = new Map<string, string>()

    const raw: unknown[][] = []
    const meterEvents: unknown[][] = []
    const buckets: unknown[][] = []
    const newKeys: [string, string][] = []
    const writtenUs = this.meters.clock.nowUs()
    const results: PieceResult[] = pieces.map((p, pi) => {
      const result: PieceResult = { events: 0, duplicates: 0, meterRows: 0, skipped: {} }
      const cover = this.coverage.get(p.stream)
      const ledgerMonths = new Set<number>()
      p.records.forEach((r, ri) => {
        const { batch } = r
        const covered = cover && r.offset <= cover.upTo ? cover.months : undefined
        batch.events.forEach((e, ei) => {
          result.events++
          const k = keys[pi][ri][ei]
          if (present.get(k.key) === k.check || claimed.get(k.key) === k.check) {
            result.duplicates++
            return
          }
          // A different event whose key half collides keeps the first one's entry (2^-64 odds).
          if (!present.has(k.key) && !claimed.has(k.key)) {
            claimed.set(k.key, k.check)
            newKeys.push([k.key, k.check])
          }
          raw.push(rawRow(batch, e))
          const matched = meterHits(index, batch.tenant_id, batch.environment_id, e, result.skipped)
          if (!matched) return
          const month = monthOf(e.timestamp)
          const vouched = covered?.get(month)
          for (const hit of matched.hits) {
            meterEvents.push(meterEventRow(batch, e, hit, matched.props))
            result.meterRows++
            if (vouched && this.meters.activatedUs(hit.meter.id) < vouched.writtenUs) continue
            buckets.push(bucketRow(batch, e, hit, matched.props))
            ledgerMonths.add(month)
          }
        })
      })
      const entry: LedgerEntry = { writtenUs, first: p.first, last: p.last, batchId: p.records[0].batch.batch_id }
      for (const month of ledgerMonths) buckets.push(ledgerRow(p.stream, month, entry))
      return result
    })

    // Raw and meter-event rows merge away when a replay writes them again; the buckets are
    // guarded by the ledger. Only the keys must wait for all three.
    await Promise.all([
      this.ch.insertCompact('events_raw', raw),
      this.ch.insertCompact('meter_events', meterEvents),
      this.ch.insertOneBlock('meter_buckets', buckets),
    ])
    await this.opts.hooks?.afterBuckets?.()
    await insertEventKeys(this.ch, newKeys)

    for (const p of pieces) {
      this.nextOffset.set(p.stream, p.last + 1n)
      const cover = this.coverage.get(p.stream)
      if (cover && p.last >= cover.upTo) this.coverage.delete(p.stream)
    }
    return results
  }
}
