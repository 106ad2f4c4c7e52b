// Pure invoice amount rules, with amounts worked out by hand: the spread of an invoice-wide
// amount over lines, coupon discounts (line-item and invoice-level) and the tax plan.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { D } from '../pricing/index.js'
import type { Coupon } from '../coupons/coupon.entity.js'
import { applyCoupons, couponApplies, type AttachedCoupon } from '../billing/apply-coupons.js'
import { spreadOverLines } from './spread.js'
import { planTaxes, type TaxCandidate } from './tax-plan.js'
import type { TaxRate } from '../taxes/tax-rate.entity.js'

const strs = (xs: { toFixed(n: number): string }[]) => xs.map((x) => x.toFixed(2))

test('spreadOverLines: proportional, largest remainder, sums exactly', () => {
  // 10.00 over 1:1:1 -> 3.333.. each; one cent left goes to the first line (ties: earlier first).
  assert.deepEqual(strs(spreadOverLines(D('10'), [D('5'), D('5'), D('5')], 'USD')), ['3.34', '3.33', '3.33'])
  // 1.00 over 30 and 70 -> 0.30 and 0.70.
  assert.deepEqual(strs(spreadOverLines(D('1'), [D('30'), D('70')], 'USD')), ['0.30', '0.70'])
  // Negative weights count as zero.
  assert.deepEqual(strs(spreadOverLines(D('4'), [D('-10'), D('8')], 'USD')), ['0.00', '4.00'])
  // No positive weight: all on the last line.
  assert.deepEqual(strs(spreadOverLines(D('2'), [D('0'), D('0')], 'USD')), ['0.00', '2.00'])
  // JPY has no decimals: 100 over 1:1:1 -> 34, 33, 33.
  assert.deepEqual(spreadOverLines(D('100'), [D('1'), D('1'), D('1')], 'JPY').map(String), ['34', '33', '33'])
})

const coupon = (over: Partial<Coupon>): Coupon => ({
  id: 'coupon_x', tenant_id: 't', environment_id: 'e', status: 'published', metadata: {}, created_at: new Date(0), updated_at: new Date(0),
  name: 'X', type: 'percentage', amount_off: null, percentage_off: '10', currency: null, duration: 'forever', duration_in_periods: null,
  max_redemptions: null, total_redemptions: 1, redeem_after: null, redeem_before: null, rules: {}, ...over,
})
const attach = (c: Coupon, line: string | null = null, timesApplied = 0): AttachedCoupon => ({
  association: { id: `assoc_${c.id}`, subscription_line_item_id: line, start_date: new Date('2026-01-01T00:00:00Z'), end_date: null, redeemed_at: new Date('2026-01-01T00:00:00Z') },
  coupon: c, timesApplied,
})

test('applyCoupons: a line-item percentage, then an invoice-level fixed amount spread by what is left', () => {
  const lines = [{ subscription_line_item_id: 'a', amount: '100.00' }, { subscription_line_item_id: 'b', amount: '50.00' }]
  const pct = coupon({ id: 'c1', percentage_off: '20' })
  const fixed = coupon({ id: 'c2', type: 'fixed', amount_off: '13.00', percentage_off: null, currency: 'USD' })
  const r = applyCoupons(lines, [attach(pct, 'a'), attach(fixed)], 'USD')
  // a: 100 - 20% = 80 left; b: 50. Invoice-level 13 over 80:50 -> 8.00 and 5.00.
  assert.deepEqual(r.lines, [
    { line_item_discount: '20.00', invoice_level_discount: '8.00' },
    { line_item_discount: '0.00', invoice_level_discount: '5.00' },
  ])
  assert.equal(r.total_discount, '33.00')
  assert.deepEqual(r.applications.map((a) => [a.lineIndex, a.discount_percentage, a.discounted_amount, a.original_price, a.final_price]), [
    [0, '20', '20.00', '100.00', '80.00'],
    [null, null, '13.00', '130.00', '117.00'],
  ])
})

test('applyCoupons: a fixed coupon never takes more than the amount; nothing to discount leaves no application', () => {
  const fixed = coupon({ type: 'fixed', amount_off: '500.00', percentage_off: null, currency: 'USD' })
  const r = applyCoupons([{ subscription_line_item_id: 'a', amount: '42.50' }], [attach(fixed)], 'USD')
  assert.equal(r.total_discount, '42.50')
  const none = applyCoupons([{ subscription_line_item_id: 'a', amount: '0.00' }], [attach(fixed)], 'USD')
  assert.deepEqual([none.total_discount, none.applications.length], ['0.00', 0])
})

test('couponApplies: window of the association and duration counted in invoices', () => {
  const jan = [new Date('2026-01-01T00:00:00Z'), new Date('2026-02-01T00:00:00Z')] as const
  assert.equal(couponApplies(attach(coupon({ duration: 'once' }), null, 0), ...jan), true)
  assert.equal(couponApplies(attach(coupon({ duration: 'once' }), null, 1), ...jan), false)
  assert.equal(couponApplies(attach(coupon({ duration: 'repeating', duration_in_periods: 3 }), null, 2), ...jan), true)
  assert.equal(couponApplies(attach(coupon({ duration: 'repeating', duration_in_periods: 3 }), null, 3), ...jan), false)
  const later = attach(coupon({}))
  later.association.start_date = new Date('2026-02-01T00:00:00Z')
  assert.equal(couponApplies(later, ...jan), false, 'starts at the period end')
})

const rate = (id: string, over: Partial<TaxRate>): TaxRate => ({
  id, tenant_id: 't', environment_id: 'e', status: 'published', metadata: {}, created_at: new Date(0), updated_at: new Date(0),
  name: id, code: id, description: null, percentage_value: null, fixed_value: null, currency: null, ...over,
})
const cand = (id: string, entity_type: 'subscription' | 'customer' | 'tenant', priority: number, r: TaxRate): TaxCandidate => ({
  association: { id, entity_type, priority, tax_rate_id: r.id }, rate: r,
})

test('planTaxes: same base for every tax, one charge per rate (most specific association), fixed only in its currency', () => {
  const vat = rate('vat', { percentage_value: '20' })
  const city = rate('city', { percentage_value: '1.5' })
  const stamp = rate('stamp', { fixed_value: '2.00', currency: 'USD' })
  const eurStamp = rate('eurstamp', { fixed_value: '1.00', currency: 'EUR' })
  const planned = planTaxes([
    cand('t-vat', 'tenant', 0, vat), cand('s-vat', 'subscription', 0, vat), cand('c-city', 'customer', 1, city),
    cand('c-stamp', 'customer', 2, stamp), cand('c-eur', 'customer', 0, eurStamp),
  ], D('117.00'), 'USD')
  // 20% of 117.00 = 23.40; 1.5% of 117.00 = 1.755 -> 1.76 (half-up); stamp 2.00; the EUR stamp is left out.
  assert.deepEqual(planned.map((t) => [t.association.id, t.taxable_amount, t.tax_amount]), [
    ['s-vat', '117.00', '23.40'], ['c-city', '117.00', '1.76'], ['c-stamp', '117.00', '2.00'],
  ])
})
