// Aggregator benchmark, without HTTP ingest competing for the CPU: produces EVENTS events
// (records of 1000, as ingest does) to a fresh topic, then starts the aggregator and prints
// events/s from its first batch until every event is in ClickHouse (inserted and committed).
// Usage: node --import tsx bench/aggregator.ts   (env: EVENTS=200000; the local stack must run)
// Keep EVENTS x ~70 bytes under the local broker's retention (5 MB per partition).
import { rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { ShardFence } from '../aggregator/shard-fence.js'
import { startAggregator } from '../aggregator/consumer.js'
import { ClickHouse } from '../clickhouse/client.js'
import { migrateClickHouse } from '../clickhouse/migrate.js'
import { encode, enrich } from '../ingest/pipeline.js'
import { loadConfig } from '../platform/config.js'
import { createKafka, createProducer } from '../platform/kafka.js'

const EVENTS = Number(process.env.EVENTS ?? 200_000)
const config = loadConfig(process.env)
const chdbPath = join(config.dataDir, 'chdb-bench-aggregator')
rmSync(chdbPath, { recursive: true, force: true })
const ch = ClickHouse.open({ ...config.clickhouse, chdbPath })
await migrateClickHouse(ch)
const topic = `aggregator-bench-${Date.now().toString(36)}`
// The local broker creates topics on first use with 4 partitions; this one needs KAFKA_EVENTS_PARTITIONS.
writeFileSync(join(config.dataDir, 'kafka', 'control'), `topic ${topic} ${config.eventsPartitions}\n`)
await new Promise((r) => setTimeout(r, 500))

const producer = await createProducer(createKafka(config, 'bench-producer'))
for (let b = 0; b < EVENTS / 1000; b += 10) {
  const messages = Array.from({ length: Math.min(10, EVENTS / 1000 - b) }, (_, k) => {
    const inputs = Array.from({ length: 1000 }, (_, i) => ({
      event_id: `${topic}-${b + k}-${i}`, event_name: 'bench', external_customer_id: `c${i % 100}`,
      timestamp: '2026-10-01T00:00:00Z', properties: { tokens: 1, model: `m${i % 5}` },
    }))
    // as ingest does: one record per partition of the request's events
    return encode(enrich(inputs, { tenantId: 't', environmentId: 'e' }, Date.now()), config.eventsPartitions)
  }).flat()
  await producer.send({ topic, acks: -1, messages: messages.map((m) => ({ key: m.key, partition: m.partition, value: m.value })) })
}
await producer.disconnect()

const meters = {
  version: async () => '1',
  load: async () => [{ id: 'm1', tenant_id: 't', environment_id: 'e', event_name: 'bench', aggregation: { type: 'SUM', field: 'tokens' }, filters: [] }],
}
const aggregator = await startAggregator({
  kafka: createKafka(config, 'bench-aggregator'), ch, meters, topic, groupId: topic, pg: ShardFence.pool(config.databaseUrl), partitions: config.eventsPartitions,
})
while (aggregator.stats.batches === 0) await new Promise((r) => setTimeout(r, 5))
const t0 = performance.now()
while (aggregator.stats.events < EVENTS) await new Promise((r) => setTimeout(r, 10))
const seconds = (performance.now() - t0) / 1000
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}`)
const w = aggregator.write
console.log(`writes: ${w.writes} (${Math.round(w.events / w.writes)} events each); per event: ${Object.entries(w.us).map(([k, v]) => `${k} ${(v / w.events).toFixed(1)} us`).join(', ')}; rows per event: raw ${(w.rawRows / w.events).toFixed(2)}, meter_events ${(w.meterEventRows / w.events).toFixed(2)}, buckets ${(w.bucketRowsOut / w.events).toFixed(3)} (folded from ${(w.bucketRowsIn / w.events).toFixed(2)}), keys ${(w.keyRows / w.events).toFixed(2)}`)
console.log(`aggregator: ${EVENTS} events (${aggregator.stats.meterRows} meter rows) in ${seconds.toFixed(2)} s = ${Math.round(EVENTS / seconds)} events/s into ClickHouse (events_raw, meter_events, meter_buckets, event_keys), offsets committed`)
await aggregator.stop()
await ch.close()
