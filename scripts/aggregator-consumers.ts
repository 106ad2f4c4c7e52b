// The aggregator consumers of one process (on the main thread or in the aggregator worker): how
// many run, each a member of the same group writing the same database, and what operators see of
// them. The first one always runs; the admin API starts and stops the others.
import type pg from 'pg'
import { startAggregator, type Aggregator, type AggregatorHooks } from '../aggregator/consumer.js'
import type { AggregatorControl, AggregatorView } from '../billing-api/admin/aggregators.js'
import type { ClickHouse } from '../clickhouse/client.js'
import type { Config } from '../platform/config.js'
import { createKafka } from '../platform/kafka.js'
import type { CommittedWriteListener } from '../schemas/committed-write.js'
import type { MeterSource } from '../schemas/meters.js'

export interface ConsumerDeps {
  config: Config
  ch: ClickHouse
  meters: MeterSource
  pg: pg.Pool
  hooks?: AggregatorHooks
  onCommittedWrite: CommittedWriteListener
  onCommitted?: (committed: { bytes: number }) => void
  log: (msg: string, err?: unknown) => void
  warn?: (msg: string, err?: unknown) => void
}

export interface ConsumerSet extends AggregatorControl {
  /** the first consumer (undefined before the first `setConsumers`) */
  readonly first: Aggregator | undefined
  consumers(): AggregatorView[]
  stop(): Promise<void>
}

/** At most this many consumers run in one process (the admin API's bound too). */
const MAX_CONSUMERS = 8
/** how long the next consumer waits for the one before to join (members joining together race a rebalance) */
const JOIN_WAIT_MS = 20_000

export function consumerSet(d: ConsumerDeps): ConsumerSet {
  const { config } = d
  const running: Aggregator[] = []
  const start = (n: number) => startAggregator({
    kafka: createKafka(config, n === 0 ? 'aggregator' : `aggregator-${n}`),
    ch: d.ch,
    meters: d.meters,
    pg: d.pg,
    topic: config.eventsTopic,
    partitions: config.eventsPartitions,
    groupId: config.aggregatorGroupId,
    groupSyncDelayMs: config.kafkaGroupSyncDelayMs,
    hooks: d.hooks,
    watchBroker: config.spool.retainUntil === 'committed',
    audit: n === 0 ? config.usageAudit : undefined,
    dedupHorizonDays: config.retention.dedupHorizonDays,
    hotWindowMinutes: config.aggregatorHotWindowMinutes,
    onCommittedWrite: d.onCommittedWrite,
    onCommitted: d.onCommitted,
    log: d.log,
    warn: d.warn,
  })
  const views = () => running.map(viewOf)
  return {
    get first() {
      return running[0]
    },
    consumers: views,
    async setConsumers(n) {
      const target = Math.min(MAX_CONSUMERS, Math.max(1, n))
      while (running.length < target) {
        const a = await start(running.length)
        running.push(a)
        if (running.length < target) await joinedOrLater(a)
      }
      while (running.length > target) await running.pop()!.stop()
      return views()
    },
    async stop() {
      for (const a of running.splice(0).reverse()) await a.stop().catch((err: unknown) => d.log('stopping an aggregator consumer failed', err))
    },
  }
}

function viewOf(a: Aggregator): AggregatorView {
  return { name: a.name, partitions: a.assignment, shards: a.stage.shards.owned.size, events: a.stats.events, writes: a.write.writes }
}

async function joinedOrLater(a: Aggregator): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([a.joined, new Promise<void>((r) => (timer = setTimeout(r, JOIN_WAIT_MS)))])
  clearTimeout(timer)
}
