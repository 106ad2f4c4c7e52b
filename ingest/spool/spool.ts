// The ingest spool: every accepted Kafka record is appended to a segmented log on disk and
// fsync'ed before the 202; the forwarder (forwarder.ts) then sends it to Kafka. A record stays
// until it is safe: acknowledged by Kafka (`acked`, a durable broker) or passed by the
// aggregator group's committed offsets (`committed`, the in-memory local broker; any number of
// aggregator processes, in this process or not). Concurrent appends share
// one write and one fdatasync (group commit). See docs/architecture.md, "The ingest spool".
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import type { SpoolConfig } from '../../platform/config.js'
import { ServiceUnavailableError } from '../../platform/errors.js'
import { spoolAppends, spoolFlushSeconds, spoolReplayedBatches } from '../../platform/metrics.js'
import { partitionOfKey, type Placed } from '../pipeline.js'
import { encodeFrame, scanFrames, valueOffset, type Frame, type SpoolRecord } from './frame.js'

type State = 'queued' | 'sending' | 'forwarded' | 'safe'

export interface SpoolEntry {
  seq: number
  segment: number
  valuePos: number
  valueLen: number
  appendedAt: number
  key: string
  tenantId: string
  environmentId: string
  events: number
  /** the partition its key names (undefined: a record of the earlier version, split when sent) */
  partition?: number
  /** where Kafka put it (its parts, for a record split when sent) in broker generation `placedIn` */
  placed?: Placed[]
  placedIn?: number
  /** kept in memory up to SPOOL_MEMORY_BYTES; otherwise read back from the segment */
  value?: Buffer
  state: State
  forwardedAt?: number
}

interface Segment {
  no: number
  path: string
  /** bytes of frames written (the file is preallocated beyond) */
  bytes: number
  /** entries not yet safe */
  live: number
  reader?: Promise<FileHandle>
}

interface PendingAppend {
  frames: Frame[]
  /** per frame: head and value */
  bufs: [Buffer, Buffer][]
  bytes: number
  resolve: () => void
  reject: (err: unknown) => void
}

export interface SpoolLeft {
  batches: number
  events: number
  bytes: number
}

const SEGMENT = /^(\d{10})\.seg$/
const segmentName = (no: number) => `${String(no).padStart(10, '0')}.seg`

export class Spool {
  /** entries not yet safe, in seq order */
  private readonly live = new Map<number, SpoolEntry>()
  private readonly byKey = new Map<string, SpoolEntry>()
  /** entries to send, from `queueHead` on (entries no longer queued are skipped) */
  private queue: SpoolEntry[] = []
  private queueHead = 0
  private readonly segments = new Map<number, Segment>()
  private active!: { seg: Segment; fh: FileHandle }
  /** the next segment, zero-filled ahead of time */
  private next: Promise<{ no: number; fh: FileHandle } | undefined> = Promise.resolve(undefined)
  private nextSeq = 0
  /** the first seq not yet written (or failed): everything below it is in `live` or safe */
  private doneSeq = 0
  private diskBytes = 0
  private memBytes = 0
  private pending: PendingAppend[] = []
  private flushing = false
  private accepting = true
  private waiters: (() => void)[] = []
  private checkpointed = -1
  private timer: NodeJS.Timeout | undefined
  /** bumped when the broker restarted and lost what it had (forwarder.ts) */
  generation = 0
  /** the group's committed offset per partition, and when it last moved (resendStale) */
  private readonly committedAt = new Map<number, bigint>()
  private readonly advancedAt = new Map<number, number>()
  /** what the broker held per partition (log start and end offsets) when last read (resendStale) */
  private brokerLog: { generation: number; at: number; partitions: Map<number, { low: bigint; high: bigint }> } | undefined
  /** when a partition's log end was last seen to move back (brokerHolds) */
  private logResetAt = 0
  /** bytes sent and not yet committed by the aggregator group, per partition (pacing) */
  private readonly awaiting = new Map<number, number>()
  awaitingBytes = 0
  /** when the earliest entry the last take() held back (SPOOL_LINGER_MS) may go; Infinity: none held */
  lingerEndsAt = Infinity
  /** entries found not yet safe when the spool was opened */
  replayedAtOpen = 0

  private constructor(
    readonly config: SpoolConfig,
    private readonly maxAwaitingBytes: number,
    private readonly maxAwaitingPerPartition: number,
  ) {}

  /**
   * Opens the spool directory and queues everything not yet safe for the forwarder (replay).
   * `maxAwaitingBytes` > 0 paces the forwarder by the in-process aggregator's commits.
   */
  static async open(config: SpoolConfig, maxAwaitingBytes = 0, maxAwaitingPerPartition = 0): Promise<Spool> {
    const spool = new Spool(config, maxAwaitingBytes, maxAwaitingPerPartition)
    await spool.load()
    spool.timer = setInterval(() => spool.writeCheckpoint(), 1000)
    spool.timer.unref()
    return spool
  }

  private async load(): Promise<void> {
    const dir = this.config.dir
    mkdirSync(dir, { recursive: true })
    let safeBelow = 0
    try {
      safeBelow = Number(readFileSync(join(dir, 'checkpoint'), 'utf8').trim()) || 0
    } catch {
      // no checkpoint yet: everything found is replayed
    }
    const numbers = readdirSync(dir).map((f) => SEGMENT.exec(f)).filter((m) => m !== null).map((m) => Number(m[1])).sort((a, b) => a - b)
    let maxSeq = safeBelow - 1
    for (const no of numbers) {
      const path = join(dir, segmentName(no))
      const file = readFileSync(path)
      const { frames, validBytes } = scanFrames(file)
      if (validBytes < file.length) truncateSync(path, validBytes)
      const seg: Segment = { no, path, bytes: validBytes, live: 0 }
      this.segments.set(no, seg)
      for (const { frame, valuePos } of frames) {
        maxSeq = Math.max(maxSeq, frame.seq)
        if (frame.seq < safeBelow) continue
        const keep = this.memBytes + frame.value.length <= this.config.memoryBytes
        this.register({ ...frame, value: keep ? Buffer.from(frame.value) : frame.value }, seg, valuePos, keep)
      }
      if (seg.live === 0) this.deleteSegment(seg)
      else this.diskBytes += seg.bytes
    }
    this.replayedAtOpen = this.live.size
    if (this.replayedAtOpen) spoolReplayedBatches.inc({ reason: 'start' }, this.replayedAtOpen)
    this.nextSeq = this.doneSeq = maxSeq + 1
    const no = (numbers.at(-1) ?? 0) + 1
    this.useSegment(no, await this.preallocate(no))
  }

  private register(frame: Frame, seg: Segment, valuePos: number, keepValue: boolean): void {
    const entry: SpoolEntry = {
      seq: frame.seq, segment: seg.no, valuePos, valueLen: frame.value.length, appendedAt: frame.appendedAt,
      key: frame.key, tenantId: frame.tenantId, environmentId: frame.environmentId, events: frame.events, partition: partitionOfKey(frame.key),
      value: keepValue ? frame.value : undefined, state: 'queued',
    }
    if (keepValue) this.memBytes += entry.valueLen
    this.live.set(entry.seq, entry)
    this.byKey.set(entry.key, entry)
    this.queue.push(entry)
    seg.live++
  }

  /**
   * A segment is zero-filled to its full size and fsync'ed before use. Appends then overwrite
   * allocated blocks, so each fdatasync flushes only our data: on ext4 (data=ordered), growing a
   * file makes every fdatasync commit the journal, which first waits for every other dirty file
   * on the disk (chDB's parts), and measured 40 ms per group commit under load.
   */
  private async preallocate(no: number): Promise<FileHandle> {
    const fh = await open(join(this.config.dir, segmentName(no)), 'w+')
    const zeros = Buffer.alloc(1024 * 1024)
    for (let pos = 0; pos < this.config.segmentBytes; pos += zeros.length) {
      await fh.write(zeros, 0, Math.min(zeros.length, this.config.segmentBytes - pos), pos)
    }
    await fh.sync()
    // The new file's directory entry must be durable too, or a power loss could lose it.
    const dirFd = openSync(this.config.dir, 'r')
    try {
      fsyncSync(dirFd)
    } finally {
      closeSync(dirFd)
    }
    return fh
  }

  private useSegment(no: number, fh: FileHandle): void {
    const seg: Segment = { no, path: join(this.config.dir, segmentName(no)), bytes: 0, live: 0 }
    this.segments.set(no, seg)
    this.active = { seg, fh }
    this.next = this.preallocate(no + 1).then(
      (next) => ({ no: no + 1, fh: next }),
      () => undefined,
    )
  }

  private async roll(): Promise<void> {
    const old = this.active
    await old.fh.close()
    const next = await this.next
    this.useSegment(old.seg.no + 1, next?.fh ?? (await this.preallocate(old.seg.no + 1)))
    if (old.seg.live === 0) this.deleteSegment(old.seg)
  }

  private deleteSegment(seg: Segment): void {
    this.segments.delete(seg.no)
    this.diskBytes -= seg.bytes
    void seg.reader?.then((fh) => fh.close()).catch(() => undefined)
    rmSync(seg.path, { force: true })
  }

  /** Resolves once the records are on disk (fdatasync); throws a 503 when the spool is full or closing. */
  append(records: SpoolRecord[]): Promise<void> {
    if (!this.accepting) throw new ServiceUnavailableError('ingest is shutting down; retry with the same event_ids', 1)
    const bytes = records.reduce((n, r) => n + valueOffset(r) + r.value.length, 0)
    if (this.diskBytes + bytes > this.config.maxBytes) {
      throw new ServiceUnavailableError(
        `the ingest spool is full (${this.config.maxBytes} bytes wait for the event log); retry with the same event_ids`, 5,
      )
    }
    const now = Date.now()
    const frames = records.map((r) => ({ ...r, seq: this.nextSeq++, appendedAt: now }))
    const bufs = frames.map(encodeFrame)
    this.diskBytes += bytes
    return new Promise((resolve, reject) => {
      this.pending.push({ frames, bufs, bytes, resolve, reject })
      void this.flush()
    })
  }

  private async flush(): Promise<void> {
    if (this.flushing) return
    this.flushing = true
    try {
      while (this.pending.length) {
        const group = this.pending.splice(0)
        try {
          const groupBytes = group.reduce((n, g) => n + g.bytes, 0)
          if (this.active.seg.bytes > 0 && this.active.seg.bytes + groupBytes > this.config.segmentBytes) await this.roll()
          const seg = this.active.seg
          const end = spoolFlushSeconds.startTimer()
          await this.writeAll(group.flatMap((g) => g.bufs.flat()))
          await this.active.fh.datasync()
          end()
          spoolAppends.inc(group.length)
          let pos = seg.bytes
          for (const g of group) {
            g.frames.forEach((f, i) => {
              const keep = this.memBytes + f.value.length <= this.config.memoryBytes
              this.register(f, seg, pos + valueOffset(f), keep)
              pos += g.bufs[i][0].length + g.bufs[i][1].length
            })
          }
          seg.bytes = pos
          this.doneSeq = group.at(-1)!.frames.at(-1)!.seq + 1
          for (const g of group) g.resolve()
          this.wake()
        } catch (err) {
          for (const g of group) {
            this.diskBytes -= g.bytes
            g.reject(new ServiceUnavailableError(`the ingest spool could not write the batch (${(err as Error).message}); retry with the same event_ids`, 1))
          }
          this.doneSeq = group.at(-1)!.frames.at(-1)!.seq + 1
          // A partial write may have left garbage at the segment's end: continue in a new one.
          await this.roll().catch(() => undefined)
        }
      }
    } finally {
      this.flushing = false
    }
  }

  private async writeAll(bufs: Buffer[]): Promise<void> {
    const total = bufs.reduce((n, b) => n + b.length, 0)
    let written = 0
    for (let i = 0; i < bufs.length; i += 512) {
      const chunk = bufs.slice(i, i + 512)
      const want = chunk.reduce((n, b) => n + b.length, 0)
      const { bytesWritten } = await this.active.fh.writev(chunk, this.active.seg.bytes + written)
      if (bytesWritten !== want) throw new Error(`short write to ${this.active.seg.path}: ${bytesWritten} of ${want} bytes`)
      written += bytesWritten
    }
    if (written !== total) throw new Error(`short write to ${this.active.seg.path}`)
  }

  /** May the forwarder send more? (pacing: the local broker keeps ~5 MB per partition) */
  canSend(): boolean {
    return this.maxAwaitingBytes === 0 || this.awaitingBytes <= this.maxAwaitingBytes
  }

  /**
   * Up to `maxBytes` of queued entries, now marked as being sent. Entries of a partition that
   * has `maxAwaitingPerPartition` bytes sent and not yet committed wait (the local broker drops
   * data beyond 5 MB per partition, consumed or not), and the others go ahead of them. With
   * SPOOL_LINGER_MS, a partition with records sent and not yet committed keeps its new entries
   * until its oldest is that old, so they reach the broker as one batch.
   */
  take(maxBytes: number, maxCount: number, now = Date.now()): SpoolEntry[] {
    const out: SpoolEntry[] = []
    const waiting: SpoolEntry[] = []
    const taking = new Map<number, number>()
    let bytes = 0
    let scanned = 0
    const lingerMs = this.config.retainUntil === 'committed' ? this.config.lingerMs : 0
    const holding = new Map<number, boolean>()
    this.lingerEndsAt = Infinity
    while (this.queueHead < this.queue.length && out.length < maxCount && bytes < maxBytes && scanned++ < 4096) {
      const e = this.queue[this.queueHead++]
      if (e.state !== 'queued') continue
      if (lingerMs > 0 && e.partition !== undefined) {
        // decided by the partition's oldest queued entry: all of them go together, or all wait
        let hold = holding.get(e.partition)
        if (hold === undefined) {
          hold = e.appendedAt + lingerMs > now && (this.awaiting.get(e.partition) ?? 0) > 0
          holding.set(e.partition, hold)
          if (hold) this.lingerEndsAt = Math.min(this.lingerEndsAt, e.appendedAt + lingerMs)
        }
        if (hold) {
          waiting.push(e)
          continue
        }
      }
      if (e.partition !== undefined && this.maxAwaitingPerPartition > 0
        && (this.awaiting.get(e.partition) ?? 0) + (taking.get(e.partition) ?? 0) >= this.maxAwaitingPerPartition) {
        waiting.push(e)
        continue
      }
      if (e.partition !== undefined) taking.set(e.partition, (taking.get(e.partition) ?? 0) + e.valueLen)
      e.state = 'sending'
      out.push(e)
      bytes += e.valueLen
    }
    if (waiting.length) this.requeueFirst(waiting)
    if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.queueHead)
      this.queueHead = 0
    }
    return out
  }

  async valueOf(e: SpoolEntry): Promise<Buffer> {
    if (e.value) return e.value
    const seg = this.segments.get(e.segment)
    if (!seg) throw new Error(`spool segment ${e.segment} of entry ${e.seq} is gone`)
    seg.reader ??= open(seg.path, 'r')
    const buf = Buffer.allocUnsafe(e.valueLen)
    await (await seg.reader).read(buf, 0, e.valueLen, e.valuePos)
    return buf
  }

  /**
   * Kafka acknowledged these (acks=all), at `placed` (per entry, its records' partitions and
   * offsets). `generation` is the one read before sending.
   */
  forwarded(entries: SpoolEntry[], generation: number, placed?: Placed[][]): void {
    if (generation !== this.generation) return this.failed(entries)
    entries.forEach((e, i) => {
      if (e.state === 'safe') return
      e.state = 'forwarded'
      e.forwardedAt = Date.now()
      e.placed = placed?.[i]
      e.placedIn = generation
      this.dropValue(e)
      if (this.config.retainUntil === 'acked') return this.markSafe(e)
      this.await(e, 1)
    })
    this.wake()
  }

  /** Counts an entry's bytes as sent and not committed (sign 1) or no longer (sign -1). */
  private await(e: SpoolEntry, sign: 1 | -1): void {
    const parts = e.placed ?? []
    const per = parts.length ? Math.ceil(e.valueLen / parts.length) : e.valueLen
    for (const p of parts.length ? parts.map((x) => x.partition) : [e.partition ?? -1]) {
      this.awaiting.set(p, Math.max(0, (this.awaiting.get(p) ?? 0) + sign * per))
    }
    this.awaitingBytes = Math.max(0, this.awaitingBytes + sign * e.valueLen)
  }

  /** The send failed: first in line again. */
  failed(entries: SpoolEntry[]): void {
    const again = entries.filter((e) => e.state !== 'safe')
    for (const e of again) e.state = 'queued'
    this.requeueFirst(again)
    this.wake()
  }

  private requeueFirst(entries: SpoolEntry[]): void {
    this.queue = [...entries, ...this.queue.slice(this.queueHead)]
    this.queueHead = 0
  }

  /**
   * The aggregator group's committed offsets (partition -> next offset to read) in broker
   * generation `generation`: an entry all of whose records lie below them was written to
   * ClickHouse, its dedup keys included (the aggregator commits only after that).
   */
  committedOffsets(offsets: Map<number, bigint>, generation: number, now = Date.now()): number {
    if (generation !== this.generation) return 0
    for (const [p, offset] of offsets) {
      if (offset !== this.committedAt.get(p)) {
        this.committedAt.set(p, offset)
        this.advancedAt.set(p, now)
      }
    }
    let released = 0
    for (const e of [...this.live.values()]) {
      if (e.state !== 'forwarded' || e.placedIn !== generation || !e.placed?.length) continue
      if (e.placed.every((p) => p.offset >= 0n && p.offset < (offsets.get(p.partition) ?? -1n))) {
        this.await(e, -1)
        this.markSafe(e)
        released++
      }
    }
    if (released) this.wake()
    return released
  }

  /** The broker restarted empty: everything sent to it and not yet safe is sent again. */
  brokerRestarted(): number {
    this.generation++
    this.committedAt.clear()
    const again: SpoolEntry[] = []
    for (const e of this.live.values()) {
      if (e.state === 'forwarded') {
        e.state = 'queued'
        e.placed = undefined
        again.push(e)
      }
    }
    this.requeueFirst(again)
    this.awaiting.clear()
    this.awaitingBytes = 0
    if (again.length) spoolReplayedBatches.inc({ reason: 'broker_restart' }, again.length)
    this.wake()
    return again.length
  }

  /** The broker's log start and end offset per partition, read now under `generation`. */
  brokerHolds(partitions: Map<number, { low: bigint; high: bigint }>, generation: number, now = Date.now()): void {
    if (generation !== this.generation) return
    // A log end that moved back is a broker that restarted without the watch noticing: what it
    // holds says nothing of records sent before (their offsets may be another record's now).
    const previous = this.brokerLog?.generation === generation ? this.brokerLog.partitions : undefined
    for (const [p, w] of partitions) if (previous?.has(p) && w.high < previous.get(p)!.high) this.logResetAt = now
    this.brokerLog = { generation, at: now, partitions }
  }

  /**
   * committed mode: records Kafka acknowledged long ago and the group never committed were lost
   * somewhere (e.g. skipped after a broker restart the watch missed); send them again. A
   * partition whose commits still advance is only behind, not stuck: its records wait (a resend
   * there would add load exactly when the aggregator is slowest). A record the broker still
   * holds (brokerHolds, read within the period) is not sent again either: the aggregator reads it
   * when it gets there, and a second copy would only push the first out of the local broker's
   * 5 MB per partition, below the group's position (a 5M-event backlog stalled on that loop).
   */
  resendStale(olderThanMs: number, now = Date.now()): number {
    if (this.config.retainUntil !== 'committed') return 0
    const again: SpoolEntry[] = []
    const stuck = (p: number) => now - (this.advancedAt.get(p) ?? 0) > olderThanMs
    const log = this.brokerLog?.generation === this.generation && now - this.brokerLog.at <= olderThanMs ? this.brokerLog.partitions : undefined
    const held = (p: Placed) => {
      const w = log?.get(p.partition)
      return w !== undefined && p.offset >= w.low && p.offset < w.high
    }
    for (const e of this.live.values()) {
      if (e.state !== 'forwarded' || e.forwardedAt! >= now - olderThanMs) continue
      if (e.placed?.length && !e.placed.some((p) => stuck(p.partition))) continue
      if (e.placed?.length && e.forwardedAt! > this.logResetAt && e.placed.every(held)) continue
      this.await(e, -1)
      e.state = 'queued'
      e.placed = undefined
      again.push(e)
    }
    if (again.length) {
      this.requeueFirst(again)
      spoolReplayedBatches.inc({ reason: 'not_committed' }, again.length)
      this.wake()
    }
    return again.length
  }

  private markSafe(e: SpoolEntry): void {
    if (e.state === 'safe') return
    e.state = 'safe'
    this.dropValue(e)
    this.live.delete(e.seq)
    this.byKey.delete(e.key)
    const seg = this.segments.get(e.segment)
    if (seg && --seg.live === 0 && seg !== this.active.seg) this.deleteSegment(seg)
  }

  private dropValue(e: SpoolEntry): void {
    if (e.value) {
      this.memBytes -= e.valueLen
      e.value = undefined
    }
  }

  /** Everything below the first entry not yet safe is never replayed again. */
  private writeCheckpoint(): void {
    const first = this.live.keys().next()
    const safeBelow = Math.min(first.done ? Infinity : first.value, this.doneSeq)
    if (safeBelow === this.checkpointed) return
    const file = join(this.config.dir, 'checkpoint')
    writeFileSync(`${file}.tmp`, String(safeBelow))
    renameSync(`${file}.tmp`, file)
    this.checkpointed = safeBelow
  }

  /** Resolves on the next change (append, send result, commit) or after `ms`. */
  changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms)
      this.waiters.push(() => {
        clearTimeout(t)
        resolve()
      })
    })
  }

  private wake(): void {
    const w = this.waiters
    this.waiters = []
    for (const f of w) f()
  }

  get bytes(): number {
    return this.diskBytes
  }

  /** Age of the oldest entry Kafka has not acknowledged yet, 0 when none. */
  oldestUnforwardedMs(now = Date.now()): number {
    for (const e of this.live.values()) if (e.state === 'queued' || e.state === 'sending') return now - e.appendedAt
    return 0
  }

  /**
   * Every record acknowledged before this instant (ms) is safe: with SPOOL_RETAIN_UNTIL=committed,
   * counted by the aggregator (the live check's usage_as_of). Now when nothing waits.
   */
  safeBefore(now = Date.now()): number {
    for (const e of this.live.values()) return Math.min(e.appendedAt, now)
    return now
  }

  /** What is not yet safe. */
  left(): SpoolLeft {
    let events = 0
    let bytes = 0
    for (const e of this.live.values()) {
      events += e.events
      bytes += e.valueLen
    }
    return { batches: this.live.size, events, bytes }
  }

  /** Nothing waits to be written or sent, and (committed) nothing waits for the aggregator. */
  get idle(): boolean {
    return this.pending.length === 0 && !this.flushing && this.live.size === 0
  }

  /** Refuses new appends from now on (shutdown). */
  stopAccepting(): void {
    this.accepting = false
  }

  async close(): Promise<void> {
    clearInterval(this.timer)
    this.accepting = false
    while (this.flushing) await this.changed(50)
    this.writeCheckpoint()
    await this.active.fh.close().catch(() => undefined)
    // The segment prepared ahead is empty: the next open finds nothing in it and deletes it.
    await this.next.then((n) => n?.fh.close()).catch(() => undefined)
    for (const seg of this.segments.values()) await seg.reader?.then((fh) => fh.close()).catch(() => undefined)
    this.wake()
  }
}
