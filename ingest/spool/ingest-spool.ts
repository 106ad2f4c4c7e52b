// The spool as ingest runs it: the log, its forwarder, its metrics and the shutdown drain.
import type { Kafka, Producer } from 'kafkajs'
import type { SpoolConfig } from '../../platform/config.js'
import { spoolBytes, spoolOldestUnforwardedSeconds } from '../../platform/metrics.js'
import { startForwarder, type Forwarder } from './forwarder.js'
import { Spool, type SpoolLeft } from './spool.js'

/**
 * What the rest of the process needs of ingest's spool, wherever it runs: on this thread
 * (IngestSpool) or on the ingest thread (thread/ingest-thread.ts).
 */
export interface SpoolHandle {
  /** every record acknowledged before this instant is counted (null: not known yet) */
  safeBefore(): number | null
  /** age of the oldest record not yet handed to Kafka (0: none) */
  oldestUnforwardedMs(): number | Promise<number>
  /** Stops accepting, then waits until everything is safe or `ms` passed; returns what is left. */
  drain(ms: number): Promise<SpoolLeft & { ms: number }>
  /** the result of the last drain */
  lastDrain?: SpoolLeft & { ms: number }
  /** what the spool holds (as of the last drain, where only that is known) */
  left(): SpoolLeft | undefined
}

export interface IngestSpool extends SpoolHandle {
  spool: Spool
  forwarder: Forwarder
  close(): Promise<void>
}

export interface IngestSpoolOptions {
  config: SpoolConfig
  producer: Producer
  topic: string
  partitions: number
  /** committed mode (the in-memory local broker): the aggregator group whose commits release records */
  committed?: { kafka: Kafka; groupId: string }
  /** the topic's partition count is checked before the first send */
  kafka?: Kafka
  /** > 0: send at most this many bytes ahead of the aggregator group's commits */
  paceBytes: number
  /** > 0: ... and at most this many per partition (the local broker keeps 5 MB per partition) */
  pacePartitionBytes: number
  log: (msg: string, err?: unknown) => void
}

export async function startIngestSpool(opts: IngestSpoolOptions): Promise<IngestSpool> {
  const spool = await Spool.open(opts.config, opts.paceBytes, opts.pacePartitionBytes)
  if (spool.replayedAtOpen) {
    const left = spool.left()
    opts.log(`spool: ${left.batches} batches (${left.events} events) from before the restart are not yet safe; sending them again`)
  }
  const forwarder = startForwarder({
    spool, producer: opts.producer, topic: opts.topic, partitions: opts.partitions, committed: opts.committed, kafka: opts.kafka, log: opts.log,
  })
  const report = () => {
    spoolBytes.set(spool.bytes)
    spoolOldestUnforwardedSeconds.set(spool.oldestUnforwardedMs() / 1000)
  }
  report()
  const timer = setInterval(report, 1000)
  timer.unref()
  const self: IngestSpool = {
    spool,
    forwarder,
    safeBefore: () => spool.safeBefore(),
    oldestUnforwardedMs: () => spool.oldestUnforwardedMs(),
    left: () => spool.left(),
    async drain(ms) {
      const t0 = Date.now()
      spool.stopAccepting()
      while (!spool.idle && Date.now() - t0 < ms) await spool.changed(50)
      const left = spool.left()
      const took = Date.now() - t0
      if (left.batches) {
        opts.log(`spool: after ${took} ms, ${left.batches} batches (${left.events} events, ${left.bytes} bytes) are not yet safe; they stay in ${opts.config.dir} and are sent again at the next start`)
      } else {
        opts.log(`spool: drained in ${took} ms`)
      }
      self.lastDrain = { ...left, ms: took }
      return self.lastDrain
    },
    async close() {
      clearInterval(timer)
      await forwarder.stop()
      await spool.close()
      report()
    },
  }
  return self
}
