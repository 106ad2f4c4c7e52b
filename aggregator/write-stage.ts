// The aggregator's one writer. Consumed Kafka batches ("pieces", one per partition at a time)
// are coalesced and written by a single serialized step, so that dedup decisions and meter
// activations never race each other:
//
//   activate meters -> dedup (event_keys) -> build rows -> events_raw + meter_events
//   + meter_buckets (+ ledger rows, one insert block) -> event_keys -> resolve pieces
//
// Why each replay is exact (docs/architecture.md, "Meter buckets and exactly-once"):
// - an event whose key is in event_keys was fully written before (keys are written last);
// - buckets written for records whose keys were not yet written are vouched for by the ledger
//   rows of the same insert block, one per stream and month part, naming the records by content;
//   a replayed record, at whatever offset and in whatever grouping, skips those months. Until a
//   vouched record's keys are written, every ledger row of its month names it again, so a row
//   that supersedes another never drops a vouch (a shorter replay, a second crash).
import type { ClickHouse } from '../clickhouse/client.js'
import { insertEventKeys, lookupEventKeys } from '../clickhouse/queries/event-keys.js'
import { ledgerRow, readLedger, recordFingerprint } from '../clickhouse/queries/bucket-ledger.js'
import type { IngestBatch } from '../schemas/events.js'
import type { CommittedWriteListener } from '../schemas/committed-write.js'
import type { ActiveMeters } from './active-meters.js'
import { committedWriteOf } from './committed-write-adapter.js'
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
  /** events counted per meter, keyed `tenant_id \0 meter_id` (metrics) */
  perMeter: Map<string, number>
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

/** What entries of the earlier ledger format vouch for: a stream's offset (never carried forward). */
const LEGACY = '\u0000offset:'
const offsetKey = (stream: string, offset: bigint) => `${LEGACY}${stream}@${offset}`

export class WriteStage {
  private pending: Pending[] = []
  private pendingEvents = 0
  private timer: NodeJS.Timeout | undefined
  private tail: Promise<void> = Promise.resolve()
  /** next offset expected per stream; a piece that does not continue it reloads the ledger */
  private readonly nextOffset = new Map<string, bigint>()
  /**
   * month -> record -> when the write that holds its buckets of that month ran (µs): read from the
   * ledger, and kept until a write of the record has recorded its keys
   */
  private readonly vouched = new Map<number, Map<string, bigint>>()
  private ledgerRead = false
  private stopped = false

  constructor(
    private readonly ch: ClickHouse,
    private readonly meters: ActiveMeters,
    private readonly opts: { maxEvents?: number; maxDelayMs?: number; hooks?: WriteStageHooks; onCommittedWrite?: CommittedWriteListener } = {},
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

  /** Reads the ledger at the first write and after every rewind (a replay of any stream). */
  private async loadVouches(pieces: Piece[]): Promise<void> {
    if (this.ledgerRead && pieces.every((p) => this.nextOffset.get(p.stream) === p.first)) return
    const ledger = await readLedger(this.ch)
    this.vouched.clear()
    const vouch = (record: string, month: number, us: bigint) => {
      if (!this.vouched.has(month)) this.vouched.set(month, new Map())
      const known = this.vouched.get(month)!.get(record)
      if (known === undefined || us > known) this.vouched.get(month)!.set(record, us)
    }
    for (const [stream, months] of ledger) {
      for (const [month, entry] of months) {
        for (const [record, us] of entry.records) vouch(record, month, us)
        const range = entry.offsets
        if (range && range.last - range.first < 100_000n) {
          for (let o = range.first; o <= range.last; o++) vouch(offsetKey(stream, o), month, entry.writtenUs)
        }
      }
    }
    this.ledgerRead = true
  }

  private async writePieces(pieces: Piece[]): Promise<PieceResult[]> {
    await this.meters.prepare()
    await this.loadVouches(pieces)
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
    /** the records of this write, and per month those whose buckets it holds (written now or vouched) */
    const written = new Set<string>()
    const ownRecords = new Map<number, Set<string>>()
    const pieceMonths: Set<number>[] = []
    const results: PieceResult[] = pieces.map((p, pi) => {
      const result: PieceResult = { events: 0, duplicates: 0, meterRows: 0, skipped: {}, perMeter: new Map() }
      /** months this piece writes buckets (or skips vouched ones) for: its ledger rows */
      const ledgerMonths = new Set<number>()
      p.records.forEach((r, ri) => {
        const { batch } = r
        const record = recordFingerprint(batch)
        written.add(record)
        const vouchOf = (month: number) => this.vouched.get(month)?.get(record) ?? this.vouched.get(month)?.get(offsetKey(p.stream, r.offset))
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
          if (!matched || matched.hits.length === 0) return
          const month = monthOf(e.timestamp)
          const vouchedUs = vouchOf(month)
          for (const hit of matched.hits) {
            meterEvents.push(meterEventRow(batch, e, hit, matched.props))
            result.meterRows++
            const meterKey = `${batch.tenant_id}\0${hit.meter.id}`
            result.perMeter.set(meterKey, (result.perMeter.get(meterKey) ?? 0) + 1)
            // Already in the buckets, written before a crash for every meter active then.
            if (vouchedUs !== undefined && this.meters.activatedUs(hit.meter.id) < vouchedUs) continue
            buckets.push(bucketRow(batch, e, hit, matched.props))
          }
          ledgerMonths.add(month)
          if (!ownRecords.has(month)) ownRecords.set(month, new Set())
          ownRecords.get(month)!.add(record)
        })
      })
      pieceMonths.push(ledgerMonths)
      return result
    })
    // Each ledger row names this write's records of its month and every record still vouched
    // for in that month (legacy offset keys excepted: offsets change meaning after a restart).
    pieces.forEach((p, pi) => {
      for (const month of pieceMonths[pi]) {
        const records = new Map<string, bigint>()
        for (const [record, us] of this.vouched.get(month) ?? []) if (!record.startsWith(LEGACY)) records.set(record, us)
        for (const record of ownRecords.get(month) ?? []) records.set(record, writtenUs)
        buckets.push(ledgerRow(p.stream, month, { writtenUs, records }))
      }
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
    if (this.opts.onCommittedWrite && buckets.length > 0) this.opts.onCommittedWrite(committedWriteOf(buckets))

    for (const p of pieces) this.nextOffset.set(p.stream, p.last + 1n)
    // Their keys are written: nothing of these records needs a vouch any more.
    for (const records of this.vouched.values()) for (const record of written) records.delete(record)
    return results
  }
}
