// Ingest's own connections: the Kafka producer, the spool and its forwarder, and the deps its
// routes take. The composition root opens them on the main thread (INGEST_THREAD=main), the
// ingest worker (ingest/thread/worker.ts) on its own.
import type { Clock } from '../platform/clock.js'
import type { Config } from '../platform/config.js'
import { checkTopicPartitions, createKafka, createProducer } from '../platform/kafka.js'
import type { LagGate } from '../platform/lag-gate.js'
import type { IngestDeps } from './routes.js'
import { startIngestSpool, type IngestSpool } from './spool/ingest-spool.js'

export interface OpenIngest {
  deps: IngestDeps
  spool?: IngestSpool
}

/** Opens ingest's connections; each one's closer goes on `closers` (closed in reverse order). */
export async function openIngest(
  config: Config,
  opts: { clock: Clock; gate?: LagGate; log: (msg: string, err?: unknown) => void },
  closers: (() => Promise<unknown>)[],
): Promise<OpenIngest> {
  const kafka = createKafka(config, 'ingest')
  const producer = await createProducer(kafka)
  closers.push(() => producer.disconnect())
  let spool: IngestSpool | undefined
  if (config.spool.enabled) {
    const committed = config.spool.retainUntil === 'committed'
    spool = await startIngestSpool({
      config: config.spool,
      producer,
      topic: config.eventsTopic,
      partitions: config.eventsPartitions,
      committed: committed ? { kafka, groupId: config.aggregatorGroupId } : undefined,
      kafka,
      paceBytes: committed ? config.ingestMaxPendingBytes : 0,
      pacePartitionBytes: committed ? config.ingestMaxPendingPartitionBytes : 0,
      log: opts.log,
    })
    closers.push(() => spool!.close())
  }
  let layout: Promise<void> | undefined
  const checkLayout = () => (layout ??= checkTopicPartitions(kafka, config.eventsTopic, config.eventsPartitions).catch((err: unknown) => {
    layout = undefined
    throw err
  }))
  return {
    deps: {
      producer, topic: config.eventsTopic, clock: opts.clock, gate: opts.gate, spool: spool?.spool, timeWindow: config.ingestTimeWindow, partitions: config.eventsPartitions, checkLayout,
    },
    spool,
  }
}
