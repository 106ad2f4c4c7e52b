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
// WRITERS consumers of one group in this process (one engine, 2 cores: no speed-up is expected;
// it shows that several writers split the shards and still count every event once).
const WRITERS = Number(process.env.WRITERS ?? 1)
const pg = ShardFence.pool(config.databaseUrl, 4 * WRITERS)
const started = performance.now()
const aggregators = await Promise.all(Array.from({ length: WRITERS }, (_, i) => startAggregator({
  kafka: createKafka(config, `bench-aggregator-${i}`), ch, meters, topic, groupId: topic, groupSyncDelayMs: config.kafkaGroupSyncDelayMs, pg, partitions: config.eventsPartitions, name: `bench-writer-${i}`,
})))
const events = () => aggregators.reduce((n, a) => n + a.stats.events, 0)
while (events() === 0) await new Promise((r) => setTimeout(r, 5))
const firstCommit = performance.now()
while (events() < EVENTS) await new Promise((r) => setTimeout(r, 10))
// From start (group join, shard claims and every write included): the first commit comes only
// after a whole write, so timing from it would leave that write out.
const seconds = (performance.now() - started) / 1000
const joinSeconds = (firstCommit - started) / 1000
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`)
const sum = (f: (w: (typeof aggregators)[number]['write']) => number) => aggregators.reduce((n, a) => n + f(a.write), 0)
const w = {
  writes: sum((x) => x.writes), events: sum((x) => x.events), rawRows: sum((x) => x.rawRows), meterEventRows: sum((x) => x.meterEventRows),
  bucketRowsIn: sum((x) => x.bucketRowsIn), bucketRowsOut: sum((x) => x.bucketRowsOut), keyRows: sum((x) => x.keyRows),
  us: Object.fromEntries(Object.keys(aggregators[0].write.us).map((k) => [k, sum((x) => x.us[k as keyof typeof x.us])])),
}
console.log(`writers: ${WRITERS} (${aggregators.map((a) => `${a.assignment.length} partitions, ${a.write.events} events`).join('; ')})`)
console.log(`writes: ${w.writes} (${Math.round(w.events / w.writes)} events each); per event: ${Object.entries(w.us).map(([k, v]) => `${k} ${(v / w.events).toFixed(1)} us`).join(', ')}; rows per event: raw ${(w.rawRows / w.events).toFixed(2)}, meter_events ${(w.meterEventRows / w.events).toFixed(2)}, buckets ${(w.bucketRowsOut / w.events).toFixed(3)} (folded from ${(w.bucketRowsIn / w.events).toFixed(2)}), keys ${(w.keyRows / w.events).toFixed(2)}`)
console.log(`aggregator: ${EVENTS} events in ${seconds.toFixed(2)} s from start (first commit after ${joinSeconds.toFixed(2)} s) = ${Math.round(EVENTS / seconds)} events/s into ClickHouse (events_raw, meter_events, meter_buckets, dedup_events), offsets committed; stage time ${(Object.values(w.us).reduce((a, b) => a + b, 0) / w.events).toFixed(1)} us per event`)
const [total] = await ch.query<{ v: string; n: string }>(`SELECT toString(sum(value_sum)) AS v, toString(sum(event_count)) AS n FROM ${ch.table('meter_buckets')} WHERE meter_id = 'm1'`)
console.log(`exact: ${total.v === String(EVENTS) && total.n === String(EVENTS) ? 'yes' : 'NO'} (SUM ${total.v}, events ${total.n}, ${EVENTS} sent)`)
for (const a of aggregators) await a.stop()
await pg.end()
await ch.close()
