// Feature usage alerts: the pure levels, and the scheduled check over real buckets firing each
// level once per (feature, customer, usage reset period), through the outbox to webhooks.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Producer } from 'kafkajs'
import { ManualClock } from '../../platform/clock.js'
import { createKafka, createProducer } from '../../platform/kafka.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { eventually, sqlOn, usePlatform } from '../../test/support/platform.js'
import { relaySystemEvents } from '../outbox/relay.js'
import { flatMonthly, newFeature, newPlan } from '../features/test-kit.js'
import { checkUsageAlerts, USAGE_ALERT_EVENT } from './check-due.js'
import { reachedLevels } from './levels.js'

const settings = { alert_enabled: true, info: { threshold: 500 }, warning: { threshold: 800 }, critical: { threshold: 1000 } }

test('reachedLevels: usage >= threshold, rising order; disabled or absent levels reach nothing', () => {
  assert.deepEqual(reachedLevels(settings, '499.999'), [])
  assert.deepEqual(reachedLevels(settings, '500'), [{ level: 'info', threshold: 500 }])
  assert.deepEqual(reachedLevels(settings, '1050').map((l) => l.level), ['info', 'warning', 'critical'])
  assert.deepEqual(reachedLevels({ ...settings, warning: null }, '900').map((l) => l.level), ['info'])
  assert.deepEqual(reachedLevels({ ...settings, alert_enabled: false }, '5000'), [])
  assert.deepEqual(reachedLevels(null, '5000'), [])
})

const clock = new ManualClock(new Date('2026-10-15T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })
const sql = sqlOn(p)

test('each level fires once per crossing per period, again in the next period; events reach webhook deliveries of the tenant only', async () => {
  clock.set(new Date('2026-10-15T00:00:00Z'))
  const t = await p.newTenant()
  const other = await p.newTenant('other')
  const meter = await created(t.api.post('/v1/meters', { name: 'Tokens', event_name: 'llm', aggregation: { type: 'SUM', field: 'tokens' } }))
  const tokens = await newFeature(t.api, {
    name: 'Tokens', type: 'metered', meter_id: meter.id, alert_settings: settings,
    reporting_unit: { conversion_rate: 1000, unit_singular: 'k token', unit_plural: 'k tokens' },
  })
  const quiet = await newFeature(t.api, { name: 'Quiet', type: 'metered', meter_id: meter.id, alert_settings: { ...settings, alert_enabled: false } })
  const plan = await newPlan(t.api, { prices: [flatMonthly('10')] })
  for (const f of [tokens, quiet]) {
    await created(t.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: f.id, usage_limit: 1000, usage_reset_period: 'MONTHLY' }))
  }
  for (const ext of ['acme', 'small']) {
    const c = await created(t.api.post('/v1/customers', { external_id: ext }))
    await created(t.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id, currency: 'USD', start_date: '2026-10-15T00:00:00Z' }))
  }
  await created(t.api.post('/v1/customers', { external_id: 'nosub' }))
  const endpoint = await created(t.api.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hook', event_types: [USAGE_ALERT_EVENT] }))
  const otherEndpoint = await created(other.api.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hook', event_types: [USAGE_ALERT_EVENT] }))

  let total = '0'
  const send = async (events: [string, string, string, number][]) => {
    await ingestAll(t.api, events.map(([id, customer, timestamp, n]) => ({ event_id: id, event_name: 'llm', external_customer_id: customer, timestamp, properties: { tokens: n } })))
    total = String(Number(total) + events.reduce((a, e) => a + e[3], 0))
    await eventually(async () => ((await usage(t.api, meter.id, {})).value === total ? true : undefined), `${total} tokens in ClickHouse`)
  }
  const check = () => checkUsageAlerts(p.ctx, { tenantId: t.tenantId })
  const alerts = async () => (await sql(`SELECT payload FROM system_events_outbox WHERE tenant_id = ? AND event_name = ? ORDER BY created_at, (payload->>'threshold')::numeric, id`, [t.tenantId, USAGE_ALERT_EVENT]))
    .map((r) => [r.payload.external_customer_id, r.payload.level, r.payload.threshold, r.payload.usage, r.payload.period_start.slice(0, 10)])

  clock.set(new Date('2026-11-20T12:00:00Z'))
  // Period Nov 15 - Dec 15. acme: 700 on Nov 10 is the previous period; 400 now -> below 500.
  await send([['e1', 'acme', '2026-11-10T00:00:00Z', 700], ['e2', 'acme', '2026-11-16T00:00:00Z', 400], ['s1', 'small', '2026-11-16T00:00:00Z', 100], ['n1', 'nosub', '2026-11-16T00:00:00Z', 5000]])
  assert.equal(await check(), 0)
  // 400 + 150 = 550 >= 500: info, once.
  await send([['e3', 'acme', '2026-11-17T00:00:00Z', 150]])
  assert.equal(await check(), 1)
  assert.equal(await check(), 0)
  // 550 + 500 = 1050: warning (800) and critical (1000) at once; info is not repeated.
  await send([['e4', 'acme', '2026-11-18T00:00:00Z', 500]])
  assert.equal(await check(), 2)
  assert.equal(await check(), 0)
  // The next period (Dec 15 - Jan 15) starts from zero: 600 crosses info again.
  clock.set(new Date('2026-12-16T12:00:00Z'))
  assert.equal(await check(), 0)
  await send([['e5', 'acme', '2026-12-16T00:00:00Z', 600]])
  assert.equal(await check(), 1)
  assert.equal(await check(), 0)

  assert.deepEqual(await alerts(), [
    ['acme', 'info', 500, '550', '2026-11-15'],
    ['acme', 'warning', 800, '1050', '2026-11-15'],
    ['acme', 'critical', 1000, '1050', '2026-11-15'],
    ['acme', 'info', 500, '600', '2026-12-15'],
  ])
  const [first] = await sql(`SELECT payload FROM system_events_outbox WHERE tenant_id = ? AND event_name = ? ORDER BY created_at, id LIMIT 1`, [t.tenantId, USAGE_ALERT_EVENT])
  assert.deepEqual(first.payload.reported_usage, { value: '0.55', unit: 'k tokens' })
  assert.equal(first.payload.feature_id, tokens.id)
  assert.deepEqual(first.payload.period_end, '2026-12-15T00:00:00.000Z')

  // The existing system-event path: relay -> Kafka -> one webhook delivery per alert, this tenant's endpoint only.
  const producer: Producer = await createProducer(createKafka(p.config, 'usage-alerts-test'))
  try {
    while ((await relaySystemEvents(p.ctx.orm, producer, p.config.systemEventsTopic, { tenantId: t.tenantId })) > 0) { /* drain */ }
  } finally {
    await producer.disconnect()
  }
  const deliveries = (await t.api.get(`/v1/webhooks/deliveries?endpoint_id=${endpoint.id}`)).body.items
  assert.deepEqual(deliveries.map((d: any) => d.event_name), Array(4).fill(USAGE_ALERT_EVENT))
  assert.equal((await other.api.get(`/v1/webhooks/deliveries?endpoint_id=${otherEndpoint.id}`)).body.items.length, 0)
  assert.equal((await sql(`SELECT count(*)::int AS n FROM usage_alert_states WHERE tenant_id = ?`, [other.tenantId]))[0].n, 0)
})
