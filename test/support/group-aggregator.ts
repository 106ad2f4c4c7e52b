// Another aggregator consumer in a test platform's group (the platform's own one stopped or
// beside it): same topic, group, engine and meters; the test adds hooks or broker options.
import { startAggregator, type Aggregator, type AggregatorOptions } from '../../aggregator/consumer.js'
import { postgresMeterSource } from '../../billing-api/meters/index.js'
import { createKafka } from '../../platform/kafka.js'
import type { TestPlatform } from './platform.js'
import { testPool } from './writer.js'

export function groupAggregator(p: TestPlatform, name: string, extra: Partial<AggregatorOptions> = {}): Promise<Aggregator> {
  return startAggregator({
    kafka: createKafka(p.config, name),
    ch: p.ctx.ch,
    meters: postgresMeterSource(p.ctx.orm),
    topic: p.config.eventsTopic,
    groupId: p.config.aggregatorGroupId,
    groupSyncDelayMs: p.config.kafkaGroupSyncDelayMs,
    pg: testPool(),
    partitions: p.config.eventsPartitions,
    ...extra,
  })
}
