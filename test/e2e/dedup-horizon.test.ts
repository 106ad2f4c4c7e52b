// Data lifecycle: ingest refuses events older than its acceptance window (INGEST_MAX_EVENT_AGE_DAYS),
// dedup keys are kept for the window plus a margin (the dedup horizon) and then forgotten, and an
// event older than the horizon that still reaches the aggregator (it waited in the pipeline) is
// not counted, since a copy of it could no longer be recognised.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { storedKeyOf } from '../../clickhouse/queries/dedup-keys.js'
import { createKafka, createProducer } from '../../platform/kafka.js'
import { encodeBatch } from '../../schemas/events.js'
import { keyText } from '../../schemas/shards.js'
import { assertError } from '../support/assertions.js'
import { created, ingestAll, usage } from '../support/fixtures.js'
import { eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'

const DAY = 86_400_000
let p: TestPlatform
before(async () => {
  p = await startTestPlatform({
    migrate: true,
    config: {
      ingestTimeWindow: { minTime: new Date('2000-01-01T00:00:00Z'), maxFutureMinutes: 5, maxAgeDays: 35 },
      retention: { eventsRawDays: 400, meterEventsDays: 400, dedupHorizonDays: 37 },
    },
  })
})
after(async () => {
  await p?.stop()
})

const iso = (ms: number) => new Date(ms).toISOString()
const ev = (id: string, ts: number) => ({ event_id: id, event_name: 'calls', external_customer_id: 'c1', timestamp: iso(ts), properties: {} })

test('an event older than the window is refused; one inside counts once; an expired one reaching the aggregator is not counted', async () => {
  const { api, tenantId, environments } = await p.newTenant()
  const m = await created(api.post('/v1/meters', { name: 'calls', event_name: 'calls', aggregation: { type: 'COUNT' } }))
  const now = Date.now()
  await ingestAll(api, [ev('inside', now - 34 * DAY)])
  await ingestAll(api, [ev('inside', now - 34 * DAY)]) // a copy: recognised by its key
  const old = await api.post('/v1/events/raw/bulk', { events: [ev('fresh', now - DAY), ev('too-old', now - 36 * DAY)] })
  assertError(old, 400, 'validation_error', /events\[1\]\.timestamp must be between .* \(35 days ago: INGEST_MAX_EVENT_AGE_DAYS\)/)

  // A record older than the horizon (37 days) arrives straight from Kafka, as one that waited
  // in the pipeline past the window's edge would: skipped, not counted.
  const producer = await createProducer(createKafka(p.config, 'horizon-test'))
  try {
    await producer.send({
      topic: p.config.eventsTopic, acks: -1,
      messages: [{
        key: 'stale-batch',
        value: encodeBatch({
          batch_id: 'stale-batch', tenant_id: tenantId, environment_id: environments.production, ingested_at: now - 38 * DAY,
          events: [{ event_id: 'stale', event_name: 'calls', external_customer_id: 'c1', customer_id: null, timestamp: now - 38 * DAY, source: null, properties: '{}' }],
        }),
      }],
    })
  } finally {
    await producer.disconnect()
  }
  await ingestAll(api, [ev('marker', now - 1000)])
  await eventually(async () => ((await usage(api, m.id, {})).event_count === 2 ? true : undefined), 'inside and marker counted')
  // The stale record precedes the marker in its partition or went to its shard's partition;
  // give a rerouted copy time to land, then check it never counted.
  await new Promise((r) => setTimeout(r, 1500))
  assert.equal((await usage(api, m.id, {})).event_count, 2)

  // The keys carry their event's time, which the table's TTL reads.
  const k = storedKeyOf(tenantId, environments.production, 'inside', Date.parse(iso(now - 34 * DAY)))
  const rows = await p.ctx.ch.query<{ ms: string }>(
    `SELECT toString(ms) AS ms FROM ${p.ctx.ch.table('dedup_events')} WHERE shard = ${k.shard} AND key = ${keyText(k.d)}`,
  )
  assert.deepEqual(rows.map((r) => Number(r.ms)), [now - 34 * DAY])
  const [ddl] = await p.ctx.ch.query<{ q: string }>(`SELECT create_table_query AS q FROM system.tables WHERE database = '${p.ctx.ch.database}' AND name = 'dedup_events'`)
  assert.match(ddl.q, /TTL toDateTime\(intDiv\(ms, 1000\)\) \+ toIntervalDay\(37\)/)
  const [raw] = await p.ctx.ch.query<{ q: string }>(`SELECT create_table_query AS q FROM system.tables WHERE database = '${p.ctx.ch.database}' AND name = 'events_raw'`)
  assert.match(raw.q, /TTL toDateTime\(timestamp\) \+ toIntervalDay\(400\)/)
})
