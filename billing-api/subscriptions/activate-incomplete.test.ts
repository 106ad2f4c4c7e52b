// payment_behavior default_incomplete and the incomplete -> active transition.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { activateIncompleteSubscription } from './activate-incomplete.js'
import { billDueSubscriptions } from '../billing/bill-due.js'

const clock = new ManualClock(new Date('2026-11-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

const fee = { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '9', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }

async function events(entityId: string): Promise<string[]> {
  const rows = await p.ctx.orm.em.getConnection().execute(`SELECT event_name FROM system_events_outbox WHERE entity_id = ? ORDER BY created_at, id`, [entityId])
  return (rows as { event_name: string }[]).map((r) => r.event_name)
}

test('an incomplete subscription is not billed until its provider activates it, once', async () => {
  const t = await p.newTenant()
  const scope = { tenant_id: t.tenantId, environment_id: t.environments.production }
  await created(t.api.post('/v1/customers', { external_id: 'c' }))
  const plan = await created(t.api.post('/v1/plans', { name: 'p', prices: [fee] }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'c', plan_id: plan.id, currency: 'USD', payment_behavior: 'default_incomplete' }))
  assert.equal(sub.subscription_status, 'INCOMPLETE')
  const manual = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'c', plan_id: plan.id, currency: 'USD', payment_behavior: 'default_incomplete', collection_method: 'send_invoice' }))
  assert.equal(manual.subscription_status, 'ACTIVE', 'nothing to wait for when invoices are sent')

  clock.set(new Date('2026-12-02T00:00:00Z'))
  const firstRun = await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  assert.equal(firstRun.invoices, 1, 'only the active subscription is billed')

  const activated = await activateIncompleteSubscription(p.ctx, scope, sub.id)
  assert.equal(activated.changed, true)
  assert.equal(activated.subscription.subscription_status, 'ACTIVE')
  assert.equal((await activateIncompleteSubscription(p.ctx, scope, sub.id)).changed, false, 'a redelivered activation changes nothing')
  assert.deepEqual(await events(sub.id), ['subscription.created', 'subscription.activated'])
  assert.equal((await t.api.get(`/v1/subscriptions/${sub.id}`)).body.subscription_status, 'ACTIVE')

  const draft = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'c', plan_id: plan.id, currency: 'USD', draft: true }))
  await assert.rejects(activateIncompleteSubscription(p.ctx, scope, draft.id), /only an INCOMPLETE subscription/)
  const other = await p.newTenant()
  await assert.rejects(activateIncompleteSubscription(p.ctx, { tenant_id: other.tenantId, environment_id: other.environments.production }, sub.id), /not found/)
})
