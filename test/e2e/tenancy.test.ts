// Tenancy is a security boundary: another tenant's (or environment's) ids answer 404, as if
// they did not exist, and their events never reach our meters.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { eventually, usePlatform } from '../support/platform.js'
import { created, ingestAll, usage } from '../support/fixtures.js'

const p = usePlatform({ clock: new ManualClock(new Date('2026-11-05T00:00:00Z')) })

test("tenant B cannot see or change tenant A's meters, events, customers, plans, subscriptions or invoices", async () => {
  const a = await p.newTenant('A')
  const b = await p.newTenant('B')
  const meter = await created(a.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const customer = await created(a.api.post('/v1/customers', { external_id: 'shared-id' }))
  const plan = await created(a.api.post('/v1/plans', {
    name: 'p', prices: [{ type: 'USAGE', billing_model: 'FLAT_FEE', currency: 'USD', amount: '1', meter_id: meter.id, billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }],
  }))
  const sub = await created(a.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: '2026-10-01T00:00:00Z' }))
  const event = (id: string) => ({ event_id: id, event_name: 'call', external_customer_id: 'shared-id', timestamp: '2026-10-02T00:00:00Z' })
  await ingestAll(a.api, [event('e1'), event('e2')])
  // B sends events with the same event ids, name and customer id: they are B's own.
  await ingestAll(b.api, [event('e1'), event('e2'), event('e3')])
  assert.equal(await eventually(async () => {
    const u = await usage(a.api, meter.id, {})
    return u.event_count === 2 ? u.value : undefined
  }, "A's events"), '2')

  await p.scheduler!.trigger('subscription-billing', { tenant_id: a.tenantId })
  const invoices = (await a.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.items
  assert.equal(invoices.length, 1)
  assert.equal(invoices[0].total, '2.00', "only A's two events are billed")

  for (const path of [
    `/v1/meters/${meter.id}`, `/v1/customers/${customer.id}`, `/v1/plans/${plan.id}`, `/v1/subscriptions/${sub.id}`,
    `/v1/invoices/${invoices[0].id}`, `/v1/tenants/${a.tenantId}`,
  ]) {
    const r = await b.api.get(path)
    assert.equal(r.status, 404, `${path} -> ${r.status}`)
    assert.equal(r.body.code, 'not_found')
  }
  assert.equal((await b.api.post(`/v1/meters/${meter.id}/usage`, { start_time: '2020-01-01T00:00:00Z', end_time: '2030-01-01T00:00:00Z' })).status, 404)
  assert.equal((await b.api.post('/v1/invoices/internal/preview', { subscription_id: sub.id })).status, 404)
  assert.equal((await b.api.put(`/v1/customers/${customer.id}`, { name: 'hijacked' })).status, 404)
  assert.equal((await b.api.delete(`/v1/meters/${meter.id}`)).status, 404)
  // B cannot build on A's records either.
  const bCustomer = await created(b.api.post('/v1/customers', { external_id: 'shared-id' }))
  assert.equal((await b.api.post('/v1/subscriptions', { customer_id: bCustomer.id, plan_id: plan.id, currency: 'USD' })).status, 400)
  assert.equal((await b.api.post('/v1/plans', { name: 'x', prices: [{ type: 'USAGE', billing_model: 'FLAT_FEE', currency: 'USD', amount: '1', meter_id: meter.id, billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }] })).status, 400)
  // Lists are scoped too.
  for (const path of ['/v1/meters', '/v1/customers', '/v1/plans', '/v1/subscriptions', '/v1/invoices']) {
    const ids = (await b.api.get(path)).body.items.map((x: any) => x.id)
    assert.ok(![meter.id, customer.id, plan.id, sub.id, invoices[0].id].some((id) => ids.includes(id)), `${path} leaks A's records`)
  }
  // A's data is unchanged.
  assert.equal((await a.api.get(`/v1/customers/${customer.id}`)).body.name, null)
  assert.equal((await a.api.get(`/v1/meters/${meter.id}`)).status, 200)
})

test('a second environment of the same tenant sees nothing of the first', async () => {
  const a = await p.newTenant('A2')
  const meter = await created(a.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const sandbox = p.client(a.apiKey, a.environments.development)
  assert.equal((await sandbox.get(`/v1/meters/${meter.id}`)).status, 404)
  assert.deepEqual((await sandbox.get('/v1/meters')).body.items, [])
  const sbMeter = await created(sandbox.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  assert.equal(sbMeter.environment_id, a.environments.development)
  await ingestAll(sandbox, [{ event_id: 's1', event_name: 'call', external_customer_id: 'c' }])
  await eventually(async () => ((await usage(sandbox, sbMeter.id, {})).value === '1' ? true : undefined), 'sandbox event')
  assert.equal((await usage(a.api, meter.id, {})).value, '0')
  // An environment id of another tenant is unknown here.
  const other = await p.newTenant('other')
  const r = await p.client(a.apiKey, other.environments.production).get('/v1/meters')
  assert.equal(r.status, 404)
  assert.equal(r.body.code, 'not_found')
})
