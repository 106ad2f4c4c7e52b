import { ClickHouse } from './clickhouse/client.ts'
import { migrateClickHouse } from './clickhouse/migrate.ts'
import { encodeBatch } from './schemas/events.ts'
import { enrich } from './ingest/pipeline.ts'
import { createKafka, createProducer } from './platform/kafka.ts'
import { loadConfig } from './platform/config.ts'
import { startAggregator } from './aggregator/consumer.ts'
import { rmSync } from 'node:fs'
const config = loadConfig()
rmSync('/tmp/chagg', { recursive: true, force: true })
const ch = ClickHouse.open({ chdbPath: '/tmp/chagg', database: 'meterline' })
await migrateClickHouse(ch)
const topic = 'aggbench-' + Date.now()
const producer = await createProducer(createKafka(config, 'p'))
const N = Number(process.env.N ?? 200)
let t = performance.now()
for (let b = 0; b < N; b += 10) {
  const msgs = []
  for (let k = 0; k < 10; k++) {
    const inputs = Array.from({ length: 1000 }, (_, i) => ({ event_id: `x-${b+k}-${i}`, event_name: 'bench', external_customer_id: `c${i % 100}`, timestamp: '2026-10-01T00:00:00Z', properties: { tokens: 1, model: `m${i % 5}` } }))
    msgs.push({ key: `k${b+k}`, value: encodeBatch(enrich(inputs as any, { tenantId: 't', environmentId: 'e' }, Date.now())) })
  }
  await producer.send({ topic, acks: -1, messages: msgs })
}
console.log('produced', N * 1000, 'in', (performance.now() - t).toFixed(0), 'ms')
const meters = { version: async () => '1', load: async () => [{ id: 'm1', tenant_id: 't', environment_id: 'e', event_name: 'bench', aggregation: { type: 'SUM', field: 'tokens' }, filters: [] }] }
t = performance.now()
const agg = await startAggregator({ kafka: createKafka(config, 'a'), ch, meters: meters as any, topic, groupId: topic })
console.log('joined in', (performance.now() - t).toFixed(0))
while (agg.stats.events < N * 1000) await new Promise((r) => setTimeout(r, 20))
const el = performance.now() - t
console.log('consumed', agg.stats.events, 'in', el.toFixed(0), 'ms =', Math.round(agg.stats.events / (el / 1000)), 'events/s; batches', agg.stats.batches)
await agg.stop(); await producer.disconnect(); await ch.close()
