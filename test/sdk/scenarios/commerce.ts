// Coupons, tax rates and tax associations through the SDK.
import assert from 'node:assert/strict'
import { needing, type Scenario } from './context.js'

export async function coupons(s: Scenario): Promise<void> {
  const { sdk, rec, ids } = s
  const c = await rec.call('coupons.createCoupon', () => sdk.coupons.createCoupon({ name: 'Launch', type: 'percentage', percentageOff: '10', cadence: 'forever' }), (r) => {
    assert.equal(r.percentageOff, '10')
    assert.equal(r.type, 'percentage')
  })
  ids.coupon = c?.id
  await needing(s, ['coupon'], ['coupons.getCoupon', 'coupons.updateCoupon', 'coupons.queryCoupon'], async (id) => {
    await rec.call('coupons.getCoupon', () => sdk.coupons.getCoupon(id), (r) => assert.equal(r.name, 'Launch'))
    await rec.call('coupons.updateCoupon', () => sdk.coupons.updateCoupon(id, { name: 'Launch 10' }), (r) => assert.equal(r.name, 'Launch 10'))
    await rec.call('coupons.queryCoupon', () => sdk.coupons.queryCoupon({ limit: 10 }), (r) => {
      assert.deepEqual(r.items?.map((x) => x.id), [id])
      assert.equal(r.items?.[0]?.percentageOff, '10')
    })
  })
}

export async function taxes(s: Scenario): Promise<void> {
  const { sdk, rec, ids } = s
  const rate = await rec.call('taxRates.createTaxRate', () => sdk.taxRates.createTaxRate({ name: 'VAT', code: 'vat', percentageValue: '20' }), (r) => {
    assert.equal(r.code, 'vat')
    assert.equal(r.percentageValue, '20')
  })
  ids.taxRate = rate?.id
  await needing(s, ['taxRate'], ['taxRates.getTaxRate', 'taxRates.getTaxRates', 'taxRates.updateTaxRate'], async (id) => {
    await rec.call('taxRates.getTaxRate', () => sdk.taxRates.getTaxRate(id), (r) => assert.equal(r.name, 'VAT'))
    await rec.call('taxRates.getTaxRates', () => sdk.taxRates.getTaxRates(), (r) => assert.deepEqual(r.map((x) => x.id), [id]))
    await rec.call('taxRates.updateTaxRate', () => sdk.taxRates.updateTaxRate(id, { name: 'VAT (FR)' }), (r) => assert.equal(r.name, 'VAT (FR)'))
  })
  const assocOps = ['taxAssociations.createTaxAssociation', 'taxAssociations.getTaxAssociation', 'taxAssociations.listTaxAssociations', 'taxAssociations.updateTaxAssociation']
  await needing(s, ['taxRate', 'customer'], assocOps, async (rateId, customerId) => {
    const a = await rec.call('taxAssociations.createTaxAssociation', () => sdk.taxAssociations.createTaxAssociation({ taxRateCode: 'vat', entityType: 'customer', entityId: customerId }), (r) => {
      assert.equal(r.taxRateId, rateId)
      assert.equal(r.entityId, customerId)
    })
    const id = a?.id
    if (!id) return assocOps.slice(1).forEach((op) => rec.skip(op, 'a tax association'))
    ids.taxAssociation = id
    await rec.call('taxAssociations.getTaxAssociation', () => sdk.taxAssociations.getTaxAssociation(id), (r) => assert.equal(r.taxRateId, rateId))
    await rec.call('taxAssociations.listTaxAssociations', () => sdk.taxAssociations.listTaxAssociations('customer', customerId), (r) => assert.deepEqual(r.items?.map((x) => x.id), [id]))
    await rec.call('taxAssociations.updateTaxAssociation', () => sdk.taxAssociations.updateTaxAssociation(id, { priority: 2 }), (r) => assert.equal(r.priority, 2))
  })
}
