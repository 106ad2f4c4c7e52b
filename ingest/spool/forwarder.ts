// Sends spooled records to Kafka (acks=all, the same key, partition and tenancy headers as a
// direct produce), a few sends in flight, retrying failed sends with backoff until the broker is
// back. In `committed` mode (the local in-memory broker) it also
// - reads the aggregator group's committed offsets and releases every record they passed
//   (whichever aggregator process wrote it);
// - watches the broker's generation (platform/broker-generation.ts): a new one means the broker
//   restarted empty, so whatever it had and the group had not committed is sent again (the
//   aggregator's dedup makes that exact).
import type { Admin, Kafka, Producer } from 'kafkajs'
import { watchBrokerGeneration, type GenerationWatch } from '../../platform/broker-generation.js'
import { checkTopicPartitions, TopicLayoutError } from '../../platform/kafka.js'
import { spoolForwardFailures } from '../../platform/metrics.js'
import { decodeBatch } from '../../schemas/events.js'
import { encode, produce, type EncodedRecord, type Placed } from '../pipeline.js'
import type { Spool, SpoolEntry } from './spool.js'

const SEND_BYTES = 1024 * 1024
const SEND_RECORDS = 200

export interface ForwarderOptions {
  spool: Spool
  producer: Producer
  topic: string
  /** partitions of the topic: a record of the earlier version (no partition in its key) is split by it */
  partitions: number
  /** set in committed mode: the group whose committed offsets release records, and the broker to watch */
  committed?: { kafka: Kafka; groupId: string; everyMs?: number }
  /** checks the topic's partition count before the first send (a record sent to a partition that does not exist is lost) */
  kafka?: Kafka
  maxInFlight?: number
  log: (msg: string, err?: unknown) => void
  /** after a broker restart was detected and the spool queued its records again */
  onBrokerRestart?: () => void
}

export interface Forwarder {
  /** sent and acknowledged records since start */
  stats: { sent: number; failures: number; brokerRestarts: number; released: number }
  stop(): Promise<void>
}

type Sendable = EncodedRecord & { tenantId: string; environmentId: string }

/** An entry as records: itself, or (a record of the earlier version) one part per partition. */
async function recordsOf(spool: Spool, e: SpoolEntry, partitions: number): Promise<Sendable[]> {
  const value = await spool.valueOf(e)
  const tenancy = { tenantId: e.tenantId, environmentId: e.environmentId }
  if (e.partition !== undefined) return [{ key: e.key, partition: e.partition, value, events: e.events, ...tenancy }]
  return encode(decodeBatch(value), partitions).map((r) => ({ ...r, key: `${e.key}:${r.key}`, ...tenancy }))
}

/** What the forwarder's loops share. */
interface ForwarderState {
  readonly opts: ForwarderOptions
  readonly spool: Spool
  readonly stats: Forwarder['stats']
  /** sends in flight */
  readonly sends: Set<Promise<void>>
  stopped: boolean
  failuresInRow: number
  /** no send before this time (a backoff) */
  retryAt: number
  layoutChecked: boolean
  /** committed mode: the broker's generation */
  watch?: GenerationWatch
  admin?: Admin
}

export function startForwarder(opts: ForwarderOptions): Forwarder {
  const f: ForwarderState = {
    opts, spool: opts.spool, stats: { sent: 0, failures: 0, brokerRestarts: 0, released: 0 }, sends: new Set(),
    stopped: false, failuresInRow: 0, retryAt: 0, layoutChecked: !opts.kafka,
  }
  const loop = sendLoop(f)
  const release = opts.committed ? releaseLoop(f, opts.committed) : Promise.resolve()
  return {
    stats: f.stats,
    async stop() {
      f.stopped = true
      await loop
      // A send still retrying against a dead broker is abandoned: its records stay in the spool.
      await Promise.race([Promise.all([...f.sends]), new Promise((r) => setTimeout(r, 2000))])
      await release
      await f.watch?.stop()
      await f.admin?.disconnect().catch(() => undefined)
    },
  }
}

/** Takes records from the spool and sends them, a few at a time, until stopped. */
async function sendLoop(f: ForwarderState): Promise<void> {
  const { opts, spool } = f
  const maxInFlight = opts.maxInFlight ?? 4
  const committed = opts.committed
  let inFlight = 0
  let staleCheckAt = Date.now()
  while (!f.stopped) {
    if (Date.now() >= staleCheckAt) {
      const again = spool.resendStale(spool.config.resendAfterMs)
      if (again) opts.log(`spool: ${again} records acknowledged by Kafka were not committed by the aggregator within ${spool.config.resendAfterMs} ms; sending them again`)
      staleCheckAt = Date.now() + 5000
    }
    // committed mode: nothing is sent before the broker's generation is known (a send to a
    // broker whose generation this process never saw could not be told from a later one's).
    while (!f.stopped && inFlight < maxInFlight && Date.now() >= f.retryAt && spool.canSend() && (!committed || f.watch?.current !== undefined)) {
      const entries = spool.take(SEND_BYTES, SEND_RECORDS)
      if (entries.length === 0) break
      inFlight++
      const p: Promise<void> = send(f, entries).finally(() => {
        inFlight--
        f.sends.delete(p)
      })
      f.sends.add(p)
    }
    // Woken by any change (append, send result, release); the timeout ends a retry backoff.
    const backoff = f.retryAt - Date.now()
    const linger = spool.lingerEndsAt - Date.now()
    await spool.changed(Math.max(1, Math.min(backoff > 0 ? backoff : 1000, linger)))
  }
}

async function send(f: ForwarderState, entries: SpoolEntry[]): Promise<void> {
  const { opts, spool } = f
  const generation = spool.generation
  try {
    if (!f.layoutChecked) {
      await checkTopicPartitions(opts.kafka!, opts.topic, opts.partitions)
      f.layoutChecked = true
    }
    const perEntry = await Promise.all(entries.map((e) => recordsOf(spool, e, opts.partitions)))
    const placed = await produce(opts.producer, opts.topic, perEntry.flat())
    let i = 0
    const byEntry: Placed[][] | undefined = placed && perEntry.map((records) => records.map(() => placed[i++]))
    spool.forwarded(entries, generation, byEntry)
    f.stats.sent += entries.length
    f.failuresInRow = 0
  } catch (err) {
    spool.failed(entries)
    f.stats.failures++
    spoolForwardFailures.inc()
    if (err instanceof TopicLayoutError) {
      if (f.failuresInRow++ % 20 === 0) opts.log(`spool: not sending: ${err.message}`)
      f.retryAt = Date.now() + 5000
      return
    }
    if (f.failuresInRow++ % 20 === 0) opts.log(`spool: sending ${entries.length} records to Kafka failed; retrying (${spool.left().batches} batches wait)`, err)
    f.retryAt = Date.now() + Math.min(100 * 2 ** Math.min(f.failuresInRow, 5), 2000)
  }
}

type Committed = NonNullable<ForwarderOptions['committed']>

/** Committed mode: watches the broker's generation, and releases what the group committed until stopped. */
async function releaseLoop(f: ForwarderState, committed: Committed): Promise<void> {
  const { opts, spool } = f
  f.watch = watchBrokerGeneration(committed.kafka, (generation) => {
    f.stats.brokerRestarts++
    const again = spool.brokerRestarted()
    opts.log(`spool: the broker restarted empty (${generation}); sending ${again} records again`)
    opts.onBrokerRestart?.()
  })
  const watch = f.watch
  const logRead = { at: 0 }
  while (!f.stopped) {
    await new Promise((r) => setTimeout(r, committed.everyMs ?? 100))
    try {
      f.admin ??= committed.kafka.admin({ retry: { retries: 0 } })
      await f.admin.connect()
      await releaseCommitted(f, f.admin, watch, committed.groupId, logRead)
    } catch {
      // broker down: the next round asks again
    }
  }
}

/** One round: releases the records the group's commits of this broker generation passed. */
async function releaseCommitted(f: ForwarderState, admin: Admin, watch: GenerationWatch, groupId: string, logRead: { at: number }): Promise<void> {
  const { opts, spool } = f
  // Offsets of one broker generation only: read it before and after (a broker that
  // restarted in between could otherwise release records of the old one).
  const generation = spool.generation
  const before = await watch.read()
  const [topic] = await admin.fetchOffsets({ groupId, topics: [opts.topic] })
  const after = await watch.read()
  if (before === undefined || before !== after || (before !== null && before !== watch.current) || generation !== spool.generation) return
  // Only commits that name this generation (aggregator/pipeline.ts): a piece fetched from the
  // emptied broker and committed to this one carries the old name, and its offsets are
  // not this broker's.
  const offsets = new Map(topic.partitions
    .filter((p) => Number(p.offset) >= 0 && (p.metadata || null) === before)
    .map((p) => [p.partition, BigInt(p.offset)]))
  f.stats.released += spool.committedOffsets(offsets, generation)
  if (Date.now() >= logRead.at) {
    // What the broker still holds: resendStale leaves those records where they are.
    logRead.at = Date.now() + 5000
    const log = await admin.fetchTopicOffsets(opts.topic)
    if ((await watch.read()) === before && generation === spool.generation) {
      spool.brokerHolds(new Map(log.map((p) => [p.partition, { low: BigInt(p.low), high: BigInt(p.high) }])), generation)
    }
  }
}
