// Pure: commitments on short periods (prorated by the period's share in seconds; windowed ones
// per window clipped by the period boundary) and the whole-period settlement after threshold
// cuts (threshold_billed subtracted). Amounts by hand.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Price } from '../plans/price.entity.js'
import type { Subscription, SubscriptionLineItem } from '../subscriptions/subscription.entity.js'
import { applyWindowedCommitment, commitmentWindows, prorateCommitment, settleCommitment, D, PricingInputError } from '../pricing/index.js'
import { chargesAfterCut, settlesWholePeriod } from './usage-cuts.js'
import { chargesForPeriod, commitmentsFor, periodShare, priceCharges, type MeasuredCharge } from './charges.js'

const d = (s: string) => new Date(s)
const noSub = { commitment_amount: null, overage_factor: null, enable_true_up: false }

const usagePrice = (over: Partial<Price> = {}) => ({
  id: 'price_calls', type: 'USAGE', billing_model: 'FLAT_FEE', tier_mode: null, currency: 'USD', amount: '0.5', tiers: null,
  transform_quantity: null, min_quantity: null, billing_period: 'MONTHLY', billing_period_count: 1, invoice_cadence: 'ARREAR', meter_id: 'm', ...over,
}) as unknown as Price
const lineItem = (over: Partial<SubscriptionLineItem> = {}) => ({ id: 'li_calls', price_id: 'price_calls', start_date: null, end_date: null, ...over }) as SubscriptionLineItem

const sub = (over: Partial<Subscription> = {}) => ({
  billing_anchor: d('2026-10-01T00:00:00Z'), billing_period: 'MONTHLY', billing_period_count: 1, billing_cycle: 'anniversary',
  start_date: d('2026-10-01T00:00:00Z'), end_date: null, trial_end: null, ...over,
}) as unknown as Subscription

describe('pricing: prorated and windowed commitments', () => {
  test('prorateCommitment: 31.00 x 11/31 = 11.00 (unrounded), factor and true-up kept; a share above 1 is refused', () => {
    const t = prorateCommitment({ amount: '31', overage_factor: '2', true_up_enabled: true }, D(11).div(31))
    assert.equal(D(t.amount).toDecimalPlaces(10).toString(), '11')
    assert.deepEqual([t.overage_factor, t.true_up_enabled], ['2', true])
    assert.throws(() => prorateCommitment({ amount: '1', overage_factor: '1', true_up_enabled: false }, '1.5'), (e: unknown) => e instanceof PricingInputError && e.field === 'share')
  })

  test('commitmentWindows: the window cut by the period start carries its share (12 of 24 hours), whole windows none', () => {
    const ws = commitmentWindows(d('2026-01-01T12:00:00Z'), d('2026-01-03T00:00:00Z'), null)
    assert.deepEqual(ws.map((w) => w.share), [{ seconds: 43_200, of: 86_400 }, undefined])
    // buckets 00-08 / 08-24; the period ends at 04:00 on Jan 2: that 00-08 bucket is cut to 4 of 8 hours.
    const buckets = [{ start: { hour: 0, minute: 0 }, end: { hour: 8, minute: 0 } }, { start: { hour: 8, minute: 0 }, end: { hour: 24, minute: 0 } }]
    assert.deepEqual(commitmentWindows(d('2026-01-01T08:00:00Z'), d('2026-01-02T04:00:00Z'), buckets).map((w) => w.share), [undefined, { seconds: 14_400, of: 28_800 }])
  })

  test('applyWindowedCommitment with shares: 10.00 per window, windows [0 (half), 4, 0] with true-up -> 5 + 6 + 10 true-up', () => {
    const split = applyWindowedCommitment(['0', '4', '0'], { amount: '10', overage_factor: '1', true_up_enabled: true }, ['0.5', '1', '1'])
    // window 1: commitment 5.00, true-up 5.00; window 2: 4.00 utilized, true-up 6.00; window 3: true-up 10.00
    assert.deepEqual([split.utilized.toString(), split.overage.toString(), split.true_up.toString()], ['4', '0', '21'])
  })

  test('settleCommitment with an already billed amount: parts unchanged, amount = parts - billed', () => {
    const split = { utilized: D(30), overage: D(0), true_up: D(20) }
    const { amount, info } = settleCommitment(split, 'USD', { amount: '50', quantity: null, overage_factor: '1', is_windowed: false, true_up_enabled: true }, '20.00')
    assert.equal(amount.toString(), '30')
    assert.deepEqual([info.computed_commitment_utilized_amount, info.computed_true_up_amount], ['30.00', '20.00'])
  })
})

describe('short periods', () => {
  test('a cancellation after 11 of 31 days: the PRORATION charge carries 11/31; commitment 31.00 with true-up, no usage -> 11.00', () => {
    const s = sub({ end_date: d('2026-10-12T00:00:00Z') })
    const li = lineItem({ commitment_amount: '31', commitment_true_up_enabled: true })
    const [c] = chargesForPeriod(s, [{ lineItem: li, price: usagePrice() }], d('2026-10-01T00:00:00Z'), d('2026-10-12T00:00:00Z'), 'PRORATION')
    assert.deepEqual(c.commitment_share, { seconds: 11 * 86_400, of: 31 * 86_400 })
    const { lines } = priceCharges([{ ...c, quantity: '0' }], 'USD', commitmentsFor('PRORATION', noSub))
    assert.equal(lines[0].amount, '11.00')
    assert.deepEqual([lines[0].commitment_info!.amount, lines[0].commitment_info!.computed_true_up_amount], ['11.00', '11.00'])
  })

  test('a whole anniversary period carries no share; the commitment applies in full', () => {
    const [c] = chargesForPeriod(sub(), [{ lineItem: lineItem(), price: usagePrice() }], d('2026-10-01T00:00:00Z'), d('2026-11-01T00:00:00Z'), 'SUBSCRIPTION_CYCLE')
    assert.equal(c.commitment_share, undefined)
    assert.equal(periodShare(sub(), d('2026-10-01T00:00:00Z'), d('2026-11-01T00:00:00Z')), null)
  })

  test('calendar stub Nov 15 - Dec 1 (16 of 30 days): subscription commitment 30.00 with true-up -> 16.00; 10 calls x 0.50 = 5.00 utilized + 11.00', () => {
    const s = sub({ billing_cycle: 'calendar', start_date: d('2026-11-15T00:00:00Z'), billing_anchor: d('2026-11-15T00:00:00Z') })
    const share = periodShare(s, d('2026-11-15T00:00:00Z'), d('2026-12-01T00:00:00Z'))
    assert.deepEqual(share, { seconds: 16 * 86_400, of: 30 * 86_400 })
    const charge: MeasuredCharge = { lineItem: lineItem(), price: usagePrice(), periodStart: d('2026-11-15T00:00:00Z'), periodEnd: d('2026-12-01T00:00:00Z'), quantity: '10' }
    const { lines } = priceCharges([charge], 'USD', commitmentsFor('SUBSCRIPTION_CYCLE', { commitment_amount: '30', overage_factor: '1', enable_true_up: true }, share))
    assert.equal(lines[0].amount, '16.00')
    assert.deepEqual([lines[0].commitment_info!.amount, lines[0].commitment_info!.computed_true_up_amount], ['16.00', '11.00'])
  })

  test('windowed: a window without a share (or no shares at all) commits in full', () => {
    const li = lineItem({ commitment_amount: '10', commitment_true_up_enabled: true, commitment_windowed: true })
    const charge: MeasuredCharge = {
      lineItem: li, price: usagePrice(), periodStart: d('2026-10-01T12:00:00Z'), periodEnd: d('2026-10-03T00:00:00Z'), quantity: '2',
      windowQuantities: ['2', '0'], windowShares: [{ seconds: 43_200, of: 86_400 }, undefined],
    }
    // window 1: commitment 5.00, 2 x 0.50 = 1.00 utilized, true-up 4.00; window 2: true-up 10.00 -> 15.00
    const { lines } = priceCharges([charge], 'USD', commitmentsFor('SUBSCRIPTION_CYCLE', noSub))
    assert.equal(lines[0].amount, '15.00')
  })
})

describe('whole-period settlement after threshold cuts', () => {
  const cycle = (li: SubscriptionLineItem, price: Price) => ({ lineItem: li, price, periodStart: d('2026-10-01T00:00:00Z'), periodEnd: d('2026-11-01T00:00:00Z') })
  const cut = d('2026-10-10T00:00:00Z')
  const billed = new Map([['li_committed', '20.00'], ['li_tiered', '12.00']])

  test('commitment, tiered and shared-commitment lines keep the whole period with threshold_billed; per-unit lines start at the cut', () => {
    const committed = cycle(lineItem({ id: 'li_committed', commitment_amount: '50' }), usagePrice())
    const tiered = cycle(lineItem({ id: 'li_tiered' }), usagePrice({ billing_model: 'TIERED' }))
    const plain = cycle(lineItem({ id: 'li_plain' }), usagePrice())
    const out = chargesAfterCut([committed, tiered, plain], 'SUBSCRIPTION_CYCLE', cut, billed, false)
    assert.deepEqual(out.map((c) => [c.lineItem.id, c.periodStart.toISOString(), c.threshold_billed]), [
      ['li_committed', '2026-10-01T00:00:00.000Z', '20.00'],
      ['li_tiered', '2026-10-01T00:00:00.000Z', '12.00'],
      ['li_plain', '2026-10-10T00:00:00.000Z', undefined],
    ])
    assert.equal(settlesWholePeriod(plain, true), true, 'a share of the subscription commitment')
    // a line the threshold invoices did not bill subtracts nothing
    assert.equal(chargesAfterCut([cycle(lineItem({ id: 'li_new', commitment_amount: '5' }), usagePrice())], 'PRORATION', cut, new Map(), false)[0].threshold_billed, '0')
  })

  test('priceCharges subtracts threshold_billed: commitment 50.00 true-up, 60 calls x 0.50 = 30.00 -> 50.00 - 20.00 = 30.00', () => {
    const c: MeasuredCharge = {
      ...cycle(lineItem({ id: 'li_committed', commitment_amount: '50', commitment_true_up_enabled: true }), usagePrice()), quantity: '60', threshold_billed: '20.00',
    }
    const plain: MeasuredCharge = { ...cycle(lineItem({ id: 'li_tiered' }), usagePrice()), quantity: '30', threshold_billed: '12.00' }
    const { lines, subtotal } = priceCharges([c, plain], 'USD', commitmentsFor('SUBSCRIPTION_CYCLE', noSub))
    // plain: 30 x 0.50 = 15.00 - 12.00 = 3.00
    assert.deepEqual(lines.map((l) => l.amount), ['30.00', '3.00'])
    assert.equal(subtotal, '33.00')
    assert.equal(lines[0].commitment_info!.computed_true_up_amount, '20.00')
  })
})
