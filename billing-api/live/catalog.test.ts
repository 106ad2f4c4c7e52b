// The live catalog keeps plain rows (db/plain-rows.ts plainSelect), not ORM entities: the same values
// the ORM hydrates, field for field, for every kind of record it holds per customer.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { EntitySchema } from '@mikro-orm/postgresql'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { AddonAssociationSchema } from '../subscriptions/addon-association.entity.js'
import { SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { WalletSchema } from '../wallets/wallet.entity.js'
import { LiveCatalog } from './catalog.js'

const clock = new ManualClock(new Date('2026-11-11T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })
const eur = { currency: 'EUR', billing_period: 'MONTHLY', type: 'FIXED', billing_model: 'FLAT_FEE' }

test('a customer\'s holdings are plain records equal to what the ORM hydrates: customer, subscriptions, add-ons, wallets', async () => {
  const t = await p.newTenant()
  const plan = await created(t.api.post('/v1/plans', { name: 'Team', prices: [{ ...eur, amount: '30', invoice_cadence: 'ADVANCE' }] }))
  const addon = await created(t.api.post('/v1/addons', { name: 'Priority', lookup_key: 'priority', prices: [{ ...eur, amount: '15', invoice_cadence: 'ADVANCE' }] }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme', name: 'Acme', email: 'billing@acme.test', metadata: { tier: 'gold' } }))
  const sub = await created(t.api.post('/v1/subscriptions', {
    customer_id: customer.id, plan_id: plan.id, currency: 'EUR', start_date: '2026-11-01T00:00:00Z', commitment_amount: '12.345', overage_factor: '1.5',
  }))
  const attached = await t.api.post(`/v1/subscriptions/${sub.id}/modify`, { change_type: 'addon_attach', addon_id: addon.id, quantity: '2', version: sub.version })
  assert.equal(attached.status, 200, JSON.stringify(attached.body))
  await created(t.api.post('/v1/wallets', { customer_id: customer.id, currency: 'EUR', conversion_rate: '1.25', name: 'Prepaid' }), 200)

  const scope = { tenant_id: t.tenantId, environment_id: t.environments.production }
  const catalog = new LiveCatalog(() => p.ctx.orm.em.fork(), 100)
  const byExternal = await catalog.holdings(scope, { external_customer_id: 'acme' })
  const byId = await catalog.holdings(scope, { customer_id: customer.id })

  const em = p.ctx.orm.em.fork()
  const orm = {
    customer: await em.findOneOrFail(CustomerSchema, { ...scope, id: customer.id }),
    subscriptions: await em.find(SubscriptionSchema, { ...scope, customer_id: customer.id }, { orderBy: { start_date: 'asc', id: 'asc' } }),
    addons: await em.find(AddonAssociationSchema, { ...scope, subscription_id: sub.id }),
    wallets: await em.find(WalletSchema, { ...scope, customer_id: customer.id }),
  }
  assert.equal(orm.subscriptions.length, 1)
  assert.equal(orm.addons.length, 1)
  assert.equal(orm.wallets.length, 1)
  const fields = (schema: EntitySchema<any>, record: object) =>
    Object.fromEntries(em.getMetadata().get(schema.meta.className).props.filter((prop) => prop.persist !== false).map((prop) => [prop.name, (record as any)[prop.name]]))
  for (const h of [byExternal, byId]) {
    assert.deepEqual(fields(CustomerSchema, h.customer), fields(CustomerSchema, orm.customer))
    assert.deepEqual(h.subscriptions.map((s) => fields(SubscriptionSchema, s)), orm.subscriptions.map((s) => fields(SubscriptionSchema, s)))
    assert.deepEqual(h.addons.map((a) => fields(AddonAssociationSchema, a)), orm.addons.map((a) => fields(AddonAssociationSchema, a)))
    assert.deepEqual(h.wallets.map((w) => fields(WalletSchema, w)), orm.wallets.map((w) => fields(WalletSchema, w)))
    // Plain objects: nothing of an EntityManager is kept with them.
    for (const record of [h.customer, ...h.subscriptions, ...h.addons, ...h.wallets]) assert.equal(Object.getPrototypeOf(record), Object.prototype)
  }
  // The values the checks use keep their types: dates, decimal strings, parsed json.
  const s = byId.subscriptions[0]!
  assert.ok(s.start_date instanceof Date && s.current_period_end instanceof Date)
  assert.equal(s.commitment_amount, orm.subscriptions[0]!.commitment_amount)
  assert.equal(typeof byId.wallets[0]!.conversion_rate, 'string')
  assert.deepEqual(byId.customer.metadata, { tier: 'gold' })
})
