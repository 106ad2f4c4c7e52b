// Plans, prices, add-ons, entitlements and credit grants through the SDK.
import assert from 'node:assert/strict'
import type { DtoCreatePriceRequest } from '@flexprice/sdk/sdk/models'
import { needing, type Scenario } from './context.js'

const monthly = {
  billingCadence: 'RECURRING', billingPeriod: 'MONTHLY', billingModel: 'FLAT_FEE', currency: 'USD', priceUnitType: 'FIAT',
} as const

export async function plansAndPrices(s: Scenario): Promise<void> {
  const { sdk, rec, ids } = s
  const plan = await rec.call('plans.createPlan', () => sdk.plans.createPlan({ name: 'Pro', lookupKey: 'pro', description: 'for teams' }), (r) => {
    assert.equal(r.lookupKey, 'pro')
    assert.equal(r.description, 'for teams')
  })
  ids.plan = plan?.id
  await needing(s, ['plan'], ['prices.createPrice', 'prices.createPricesBulk'], async (planId) => {
    const fee: DtoCreatePriceRequest = { ...monthly, type: 'FIXED', amount: '20.00', invoiceCadence: 'ADVANCE', entityType: 'PLAN', entityId: planId, lookupKey: 'pro-fee' }
    const p = await rec.call('prices.createPrice', () => sdk.prices.createPrice(fee), (r) => {
      assert.equal(r.amount, '20.00')
      assert.equal(r.entityId, planId)
      assert.equal(r.type, 'FIXED')
    })
    ids.feePrice = p?.id
    if (!ids.meter) return rec.skip('prices.createPricesBulk', 'a meter')
    const perToken: DtoCreatePriceRequest = { ...monthly, type: 'USAGE', amount: '0.01', invoiceCadence: 'ARREAR', entityType: 'PLAN', entityId: planId, meterId: ids.meter }
    const bulk = await rec.call('prices.createPricesBulk', () => sdk.prices.createPricesBulk({ items: [perToken] }), (r) => {
      assert.equal(r.items?.length, 1)
      assert.equal(r.items?.[0]?.meterId, ids.meter)
      assert.equal(r.items?.[0]?.amount, '0.01')
    })
    ids.usagePrice = bulk?.items?.[0]?.id
  })
  await needing(s, ['plan', 'feePrice'], ['plans.getPlan', 'plans.queryPlan', 'plans.updatePlan', 'prices.getPrice', 'prices.getPriceByLookupKey', 'prices.queryPrice', 'prices.updatePrice'], async (planId, priceId) => {
    await rec.call('plans.getPlan', () => sdk.plans.getPlan(planId), (r) => assert.ok(r.prices?.some((x) => x.id === priceId && x.amount === '20.00')))
    await rec.call('plans.queryPlan', () => sdk.plans.queryPlan({}), (r) => assert.deepEqual(r.items?.map((x) => x.id), [planId]))
    await rec.call('plans.updatePlan', () => sdk.plans.updatePlan(planId, { name: 'Pro plan' }), (r) => assert.equal(r.name, 'Pro plan'))
    await rec.call('prices.getPrice', () => sdk.prices.getPrice(priceId), (r) => assert.equal(r.invoiceCadence, 'ADVANCE'))
    await rec.call('prices.getPriceByLookupKey', () => sdk.prices.getPriceByLookupKey('pro-fee'), (r) => assert.equal(r.id, priceId))
    await rec.call('prices.queryPrice', () => sdk.prices.queryPrice({ planIds: [planId] }), (r) => assert.ok(r.items?.some((x) => x.id === priceId)))
    await rec.call('prices.updatePrice', () => sdk.prices.updatePrice(priceId, { description: 'platform fee' }), (r) => assert.equal(r.description, 'platform fee'))
  })
  await needing(s, ['plan'], ['plans.postPlansIdClone'], async (planId) => {
    await rec.call('plans.postPlansIdClone', () => sdk.plans.postPlansIdClone(planId, { name: 'Pro copy', lookupKey: 'pro-copy' }), (r) => {
      assert.equal(r.lookupKey, 'pro-copy')
      assert.equal(r.name, 'Pro copy')
      assert.notEqual(r.id, planId)
      // the plan's prices copied onto the new plan: same amounts, new ids
      assert.deepEqual(r.prices?.map((x) => x.amount).sort(), ids.usagePrice ? ['0.01', '20.00'] : ['20.00'])
      assert.ok(r.prices?.every((x) => x.entityId === r.id && x.id !== ids.feePrice && x.id !== ids.usagePrice))
    })
  })
}

export async function addonsAndEntitlements(s: Scenario): Promise<void> {
  const { sdk, rec, ids } = s
  const addon = await rec.call('addons.createAddon', () => sdk.addons.createAddon({ name: 'Extra', lookupKey: 'extra', type: 'onetime' }), (r) => assert.equal(r.lookupKey, 'extra'))
  ids.addon = addon?.id
  await needing(s, ['addon'], ['addons.getAddon', 'addons.getAddonByLookupKey', 'addons.queryAddon', 'addons.updateAddon'], async (id) => {
    await rec.call('addons.getAddon', () => sdk.addons.getAddon(id), (r) => assert.equal(r.name, 'Extra'))
    await rec.call('addons.getAddonByLookupKey', () => sdk.addons.getAddonByLookupKey('extra'), (r) => assert.equal(r.id, id))
    await rec.call('addons.queryAddon', () => sdk.addons.queryAddon({ limit: 10 }), (r) => assert.deepEqual(r.items?.map((x) => x.id), [id]))
    await rec.call('addons.updateAddon', () => sdk.addons.updateAddon(id, { name: 'Extras' }), (r) => assert.equal(r.name, 'Extras'))
  })
  const entOps = ['entitlements.createEntitlement', 'entitlements.getEntitlement', 'entitlements.updateEntitlement', 'entitlements.queryEntitlement', 'entitlements.getPlanEntitlements']
  await needing(s, ['plan', 'feature'], entOps, async (planId, featureId) => {
    const e = await rec.call('entitlements.createEntitlement', () => sdk.entitlements.createEntitlement({
      entityType: 'PLAN', entityId: planId, featureId, featureType: 'metered', usageLimit: 1000, usageResetPeriod: 'MONTHLY', isEnabled: true,
    }), (r) => {
      assert.equal(r.featureId, featureId)
      assert.equal(r.usageLimit, 1000)
    })
    if (!e?.id) return entOps.slice(1).forEach((op) => rec.skip(op, 'an entitlement'))
    ids.entitlement = e.id
    await rec.call('entitlements.getEntitlement', () => sdk.entitlements.getEntitlement(e.id!), (r) => assert.equal(r.entityId, planId))
    await rec.call('entitlements.updateEntitlement', () => sdk.entitlements.updateEntitlement(e.id!, { usageLimit: 2000 }), (r) => assert.equal(r.usageLimit, 2000))
    await rec.call('entitlements.queryEntitlement', () => sdk.entitlements.queryEntitlement({ featureIds: [featureId] }), (r) => assert.deepEqual(r.items?.map((x) => x.id), [e.id]))
    await rec.call('entitlements.getPlanEntitlements', () => sdk.entitlements.getPlanEntitlements(planId), (r) => assert.ok(JSON.stringify(r).includes(e.id!)))
  })
  await needing(s, ['addon', 'booleanFeature'], ['entitlements.createEntitlementsBulk', 'entitlements.getAddonEntitlements'], async (addonId, featureId) => {
    await rec.call('entitlements.createEntitlementsBulk', () => sdk.entitlements.createEntitlementsBulk({
      items: [{ entityType: 'ADDON', entityId: addonId, featureId, featureType: 'boolean', isEnabled: true }],
    }), (r) => assert.equal(r.items?.[0]?.featureId, featureId))
    await rec.call('entitlements.getAddonEntitlements', () => sdk.entitlements.getAddonEntitlements(addonId), (r) => assert.ok(JSON.stringify(r).includes(featureId)))
  })
}

export async function creditGrants(s: Scenario): Promise<void> {
  const { sdk, rec, ids } = s
  const ops = ['creditGrants.createCreditGrant', 'creditGrants.getCreditGrant', 'creditGrants.updateCreditGrant', 'creditGrants.getPlanCreditGrants']
  await needing(s, ['plan'], ops, async (planId) => {
    const g = await rec.call('creditGrants.createCreditGrant', () => sdk.creditGrants.createCreditGrant({
      name: 'Welcome', credits: '10', cadence: 'RECURRING', period: 'MONTHLY', periodCount: 1, scope: 'PLAN', planId,
    }), (r) => {
      assert.equal(r.credits, '10')
      assert.equal(r.planId, planId)
    })
    if (!g?.id) return ops.slice(1).forEach((op) => rec.skip(op, 'a credit grant'))
    ids.creditGrant = g.id
    await rec.call('creditGrants.getCreditGrant', () => sdk.creditGrants.getCreditGrant(g.id!), (r) => assert.equal(r.name, 'Welcome'))
    await rec.call('creditGrants.updateCreditGrant', () => sdk.creditGrants.updateCreditGrant(g.id!, { name: 'Welcome credits' }), (r) => assert.equal(r.name, 'Welcome credits'))
    await rec.call('creditGrants.getPlanCreditGrants', () => sdk.creditGrants.getPlanCreditGrants(planId), (r) => assert.ok(JSON.stringify(r).includes(g.id!)))
  })
}
