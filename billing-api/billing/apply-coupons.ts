// Pure: which of a subscription's coupons apply to an invoice period, and what they take off
// each line. Decimals and dates in, decimals out; the coupon arithmetic is coupons/discount.ts.
import type { Decimal } from 'decimal.js'
import { D, toMoneyString } from '../pricing/index.js'
import type { Coupon } from '../coupons/coupon.entity.js'
import type { CouponAssociation } from '../coupons/coupon-association.entity.js'
import { couponDiscount } from '../coupons/index.js'
import { spreadOverLines } from '../invoices/index.js'
export interface AttachedCoupon {
  association: Pick<CouponAssociation, 'id' | 'subscription_line_item_id' | 'start_date' | 'end_date' | 'redeemed_at'>
  coupon: Coupon
  /** other live invoices that already carry a discount of this association */
  timesApplied: number
}

/**
 * The association's window overlaps [start, end) and the coupon's duration is not used up:
 * `once` discounts one invoice, `repeating` duration_in_periods invoices, `forever` every one.
 */
export function couponApplies(c: AttachedCoupon, periodStart: Date, periodEnd: Date): boolean {
  const { association: a, coupon } = c
  if (!(a.start_date < periodEnd) || (a.end_date && a.end_date <= periodStart)) return false
  if (coupon.duration === 'once') return c.timesApplied < 1
  if (coupon.duration === 'repeating') return c.timesApplied < (coupon.duration_in_periods ?? 0)
  return true
}

export interface DiscountLineInput {
  subscription_line_item_id: string | null
  amount: string
}

export interface PlannedCouponApplication {
  /** index into the lines; null for an invoice-level coupon */
  lineIndex: number | null
  attached: AttachedCoupon
  discount_percentage: string | null
  discounted_amount: string
  original_price: string
  final_price: string
}

export interface LineDiscount {
  line_item_discount: string
  invoice_level_discount: string
}

export interface CouponDiscounts {
  lines: LineDiscount[]
  applications: PlannedCouponApplication[]
  total_discount: string
}

/**
 * Line-item coupons first, each on what is left of its line after the coupons before it; then
 * invoice-level coupons, each on what is left of the whole invoice, spread over the lines in
 * proportion to what is left of each (spread.ts). Coupons apply in the given order (association
 * created_at). A coupon that takes nothing off leaves no application.
 */
export function applyCoupons(lines: DiscountLineInput[], coupons: AttachedCoupon[], currency: string): CouponDiscounts {
  const left = lines.map((l) => D.max(new D(l.amount), 0))
  const lineDiscount = lines.map(() => new D(0))
  const invoiceDiscount = lines.map(() => new D(0))
  const applications: PlannedCouponApplication[] = []
  const money = (x: Decimal) => toMoneyString(x, currency)
  const pct = (c: Coupon) => (c.type === 'percentage' ? c.percentage_off : null)

  for (const attached of coupons.filter((c) => c.association.subscription_line_item_id !== null)) {
    lines.forEach((line, i) => {
      if (line.subscription_line_item_id !== attached.association.subscription_line_item_id) return
      const d = couponDiscount(attached.coupon, left[i], currency, attached.association.redeemed_at)
      if (d.isZero()) return
      applications.push({
        lineIndex: i, attached, discount_percentage: pct(attached.coupon), discounted_amount: money(d),
        original_price: money(left[i]), final_price: money(left[i].minus(d)),
      })
      lineDiscount[i] = lineDiscount[i].plus(d)
      left[i] = left[i].minus(d)
    })
  }
  for (const attached of coupons.filter((c) => c.association.subscription_line_item_id === null)) {
    const base = left.reduce((a, b) => a.plus(b), new D(0))
    const d = couponDiscount(attached.coupon, base, currency, attached.association.redeemed_at)
    if (d.isZero()) continue
    applications.push({
      lineIndex: null, attached, discount_percentage: pct(attached.coupon), discounted_amount: money(d),
      original_price: money(base), final_price: money(base.minus(d)),
    })
    spreadOverLines(d, left, currency).forEach((share, i) => {
      invoiceDiscount[i] = invoiceDiscount[i].plus(share)
      left[i] = left[i].minus(share)
    })
  }
  const total = [...lineDiscount, ...invoiceDiscount].reduce((a, b) => a.plus(b), new D(0))
  return {
    lines: lines.map((_, i) => ({ line_item_discount: money(lineDiscount[i]), invoice_level_discount: money(invoiceDiscount[i]) })),
    applications,
    total_discount: money(total),
  }
}
