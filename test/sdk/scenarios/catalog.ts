// Customers, features, groups, price units, plans, prices, add-ons and entitlements through the SDK.
import assert from 'node:assert/strict'
import { needing, type Scenario } from './context.js'

export async function customers(s: Scenario): Promise<void> {
  const { sdk, rec, ids } = s
  const c = await rec.call('customers.createCustomer', () => sdk.customers.createCustomer({ externalId: 'acme', name: 'Acme', email: 'billing@acme.test', addressCountry: 'FR' }), (r) => {
    assert.equal(r.externalId, 'acme')
    assert.equal(r.email, 'billing@acme.test')
    assert.equal(r.addressCountry, 'FR')
  })
  ids.customer = c?.id
  await needing(s, ['customer'], ['customers.getCustomer', 'customers.getCustomerByExternalId', 'customers.updateCustomer', 'customers.queryCustomer'], async (id) => {
    await rec.call('customers.getCustomer', () => sdk.customers.getCustomer(id), (r) => assert.equal(r.name, 'Acme'))
    await rec.call('customers.getCustomerByExternalId', () => sdk.customers.getCustomerByExternalId('acme'), (r) => assert.equal(r.id, id))
    await rec.call('customers.updateCustomer', () => sdk.customers.updateCustomer({ name: 'Acme Inc' }, id), (r) => assert.equal(r.name, 'Acme Inc'))
    await rec.call('customers.queryCustomer', () => sdk.customers.queryCustomer({ externalId: 'acme' }), (r) => {
      assert.deepEqual(r.items?.map((x) => x.id), [id])
      assert.equal(r.pagination?.total, 1)
    })
  })
  const gone = await rec.call('customers.createCustomer', () => sdk.customers.createCustomer({ externalId: 'to-delete' }), () => {})
  ids.customerToDelete = gone?.id
  await needing(s, ['customerToDelete'], ['customers.deleteCustomer'], async (id) => {
    await rec.call('customers.deleteCustomer', () => sdk.customers.deleteCustomer(id), async () => assert.equal((await s.api.get(`/v1/customers/${id}`)).status, 404))
  })
}

export async function featuresAndGroups(s: Scenario): Promise<void> {
  const { sdk, rec, ids } = s
  const meter = await s.api.post('/v1/meters', { name: 'Tokens', event_name: 'llm_call', aggregation: { type: 'SUM', field: 'tokens' } })
  ids.meter = meter.body.id
  const f = await rec.call('features.createFeature', () => sdk.features.createFeature({ name: 'Tokens', type: 'metered', meterId: ids.meter, lookupKey: 'tokens', unitSingular: 'token', unitPlural: 'tokens' }), (r) => {
    assert.equal(r.meterId, ids.meter)
    assert.equal(r.type, 'metered')
    assert.equal(r.lookupKey, 'tokens')
  })
  ids.feature = f?.id
  await needing(s, ['feature'], ['features.updateFeature', 'features.queryFeature'], async (id) => {
    await rec.call('features.updateFeature', () => sdk.features.updateFeature(id, { name: 'LLM tokens' }), (r) => assert.equal(r.name, 'LLM tokens'))
    await rec.call('features.queryFeature', () => sdk.features.queryFeature({ lookupKey: 'tokens' }), (r) => {
      assert.deepEqual(r.items?.map((x) => x.id), [id])
      assert.equal(r.items?.[0]?.meterId, ids.meter)
    })
  })
  const seats = await rec.call('features.createFeature', () => sdk.features.createFeature({ name: 'SSO', type: 'boolean', lookupKey: 'sso' }), (r) => assert.equal(r.type, 'boolean'))
  ids.booleanFeature = seats?.id

  const g = await rec.call('groups.createGroup', () => sdk.groups.createGroup({ name: 'Usage', entityType: 'price', lookupKey: 'usage' }), (r) => {
    assert.equal(r.name, 'Usage')
    assert.equal(r.entityType, 'price')
  })
  ids.group = g?.id
  await needing(s, ['group'], ['groups.getGroup', 'groups.queryGroup', 'groups.deleteGroup'], async (id) => {
    await rec.call('groups.getGroup', () => sdk.groups.getGroup(id), (r) => assert.equal(r.name, 'Usage'))
    await rec.call('groups.queryGroup', () => sdk.groups.queryGroup({ entityType: 'price' }), (r) => assert.deepEqual(r.items?.map((x) => x.id), [id]))
    await rec.call('groups.deleteGroup', () => sdk.groups.deleteGroup(id), async () => assert.equal((await s.api.get(`/v1/groups/${id}`)).status, 404))
  })
}

export async function priceUnits(s: Scenario): Promise<void> {
  const { sdk, rec } = s
  const u = await rec.call('priceUnits.createPriceUnit', () => sdk.priceUnits.createPriceUnit({ name: 'Credits', code: 'crd', symbol: 'C', baseCurrency: 'usd', conversionRate: '0.01' }), (r) => {
    assert.equal(r.code, 'crd')
    assert.equal(r.conversionRate, '0.01')
  })
  const ops = ['priceUnits.getPriceUnit', 'priceUnits.getPriceUnitByCode', 'priceUnits.listPriceUnits', 'priceUnits.queryPriceUnit', 'priceUnits.updatePriceUnit', 'priceUnits.deletePriceUnit']
  if (!u?.id) return ops.forEach((op) => rec.skip(op, 'a price unit'))
  const id = u.id
  await rec.call('priceUnits.getPriceUnit', () => sdk.priceUnits.getPriceUnit(id), (r) => assert.equal(r.symbol, 'C'))
  await rec.call('priceUnits.getPriceUnitByCode', () => sdk.priceUnits.getPriceUnitByCode('crd'), (r) => assert.equal(r.id, id))
  await rec.call('priceUnits.listPriceUnits', () => sdk.priceUnits.listPriceUnits(), (r) => assert.deepEqual(r.items?.map((x) => x.id), [id]))
  await rec.call('priceUnits.queryPriceUnit', () => sdk.priceUnits.queryPriceUnit({}), (r) => assert.deepEqual(r.items?.map((x) => x.id), [id]))
  await rec.call('priceUnits.updatePriceUnit', () => sdk.priceUnits.updatePriceUnit(id, { name: 'Credit points' }), (r) => assert.equal(r.name, 'Credit points'))
  await rec.call('priceUnits.deletePriceUnit', () => sdk.priceUnits.deletePriceUnit(id), async () => assert.equal((await s.api.get(`/v1/pricing-units/${id}`)).body.status, 'archived'))
}
