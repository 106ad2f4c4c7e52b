// Pure: which tax associations apply to an invoice and what each charges. No I/O.
import type { Decimal } from 'decimal.js'
import { D, toMoneyString } from '../pricing/index.js'
import type { TaxAssociation } from '../taxes/tax-association.entity.js'
import { taxAmount } from '../taxes/index.js'
import type { TaxRate } from '../taxes/tax-rate.entity.js'

export interface TaxCandidate {
  association: Pick<TaxAssociation, 'id' | 'entity_type' | 'priority' | 'tax_rate_id'>
  rate: TaxRate
}

export interface PlannedTax extends TaxCandidate {
  taxable_amount: string
  tax_amount: string
}

const SPECIFICITY: Record<string, number> = { subscription: 0, customer: 1, tenant: 2 }

/**
 * Every tax is charged on the same taxable amount (subtotal - discounts; taxes do not compound).
 * A rate attached at several levels is charged once, from its most specific association
 * (subscription, then customer, then tenant). Order: priority ascending, then specificity.
 * A fixed tax charges its value on invoices with a positive taxable amount, and only in its own
 * currency (another currency's fixed tax is left out rather than failing the finalization).
 */
export function planTaxes(candidates: TaxCandidate[], taxable: Decimal, currency: string): PlannedTax[] {
  const byRate = new Map<string, TaxCandidate>()
  for (const c of [...candidates].sort((a, b) => SPECIFICITY[a.association.entity_type] - SPECIFICITY[b.association.entity_type])) {
    if (!byRate.has(c.rate.id)) byRate.set(c.rate.id, c)
  }
  const chosen = [...byRate.values()].sort(
    (a, b) => a.association.priority - b.association.priority || SPECIFICITY[a.association.entity_type] - SPECIFICITY[b.association.entity_type],
  )
  const out: PlannedTax[] = []
  for (const c of chosen) {
    if (c.rate.fixed_value !== null && (!taxable.gt(0) || c.rate.currency?.toUpperCase() !== currency.toUpperCase())) continue
    out.push({ ...c, taxable_amount: toMoneyString(taxable, currency), tax_amount: toMoneyString(taxAmount(c.rate, taxable, currency), currency) })
  }
  return out
}

export const sumTaxes = (taxes: { tax_amount: string }[]): Decimal => taxes.reduce((a, t) => a.plus(t.tax_amount), new D(0))
