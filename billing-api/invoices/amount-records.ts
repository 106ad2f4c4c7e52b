// Reads an invoice's coupon applications and applied taxes (with their tax rates), in order.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { TaxRateSchema, type TaxRate } from '../taxes/tax-rate.entity.js'
import { AppliedTaxSchema, CouponApplicationSchema, type AppliedTax, type CouponApplication } from './amounts.entity.js'

export type AppliedTaxView = AppliedTax & { tax_rate?: TaxRate }

export async function invoiceAmountRecords(
  em: EntityManager, scope: Scope, invoiceId: string,
): Promise<{ couponApplications: CouponApplication[]; taxes: AppliedTaxView[] }> {
  const couponApplications = await em.find(CouponApplicationSchema, { ...scope, invoice_id: invoiceId }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const taxes = await em.find(AppliedTaxSchema, { ...scope, entity_id: invoiceId }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const rates = taxes.length
    ? new Map((await em.find(TaxRateSchema, { ...scope, id: { $in: taxes.map((t) => t.tax_rate_id) } })).map((r) => [r.id, r]))
    : new Map<string, TaxRate>()
  return { couponApplications, taxes: taxes.map((t) => ({ ...t, tax_rate: rates.get(t.tax_rate_id) })) }
}
