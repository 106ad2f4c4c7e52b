// Finalization step: the taxes of the invoice's subscription, customer and tenant associations
// (auto_apply only) become AppliedTax rows, in the finalizing transaction. Each row's
// idempotency_key is `<invoice id>:<tax association id>` (unique), so a tax is applied once.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Decimal } from 'decimal.js'
import { newId } from '../../platform/ids.js'
import { TaxAssociationSchema, type TaxAssociation, type TaxEntityType } from '../taxes/tax-association.entity.js'
import { TaxRateSchema, type TaxRate } from '../taxes/tax-rate.entity.js'
import { AppliedTaxSchema, type AppliedTax } from './amounts.entity.js'
import type { Invoice } from './invoice.entity.js'
import { planTaxes } from './tax-plan.js'
import type { FinalizeReads } from './finalize-reads.js'

/** `reads`: a finalization batch's reads (finalize-reads.ts), when they answer for this invoice. */
export async function applyTaxes(tx: EntityManager, invoice: Invoice, taxable: Decimal, now: Date, reads?: FinalizeReads): Promise<AppliedTax[]> {
  const scope = { tenant_id: invoice.tenant_id, environment_id: invoice.environment_id }
  const batch = reads?.taxes(invoice)
  if (batch) return createTaxes(tx, invoice, taxable, now, batch.associations, batch.rates)
  const already = await tx.find(AppliedTaxSchema, { ...scope, entity_id: invoice.id })
  if (already.length > 0) return already
  const entities: { entity_type: TaxEntityType; entity_id: string }[] = [
    ...(invoice.subscription_id ? [{ entity_type: 'subscription' as const, entity_id: invoice.subscription_id }] : []),
    { entity_type: 'customer', entity_id: invoice.customer_id },
    { entity_type: 'tenant', entity_id: invoice.tenant_id },
  ]
  const associations = await tx.find(
    TaxAssociationSchema,
    { ...scope, status: 'published', auto_apply: true, $or: entities },
    { orderBy: { priority: 'asc', created_at: 'asc', id: 'asc' } },
  )
  if (associations.length === 0) return []
  // Archived rates keep charging the associations made while they were published.
  const rates = new Map((await tx.find(TaxRateSchema, { ...scope, id: { $in: associations.map((a) => a.tax_rate_id) }, status: { $ne: 'deleted' } })).map((r) => [r.id, r]))
  return createTaxes(tx, invoice, taxable, now, associations, rates)
}

function createTaxes(tx: EntityManager, invoice: Invoice, taxable: Decimal, now: Date, associations: TaxAssociation[], rates: Map<string, TaxRate>): AppliedTax[] {
  if (associations.length === 0) return []
  const scope = { tenant_id: invoice.tenant_id, environment_id: invoice.environment_id }
  const planned = planTaxes(
    associations.filter((a) => rates.has(a.tax_rate_id)).map((association) => ({ association, rate: rates.get(association.tax_rate_id)! })),
    taxable, invoice.currency,
  )
  return planned.map((t) => tx.create(AppliedTaxSchema, {
    id: newId('applied_tax'), ...scope, entity_type: 'invoice', entity_id: invoice.id, tax_rate_id: t.rate.id,
    tax_association_id: t.association.id, currency: invoice.currency, idempotency_key: `${invoice.id}:${t.association.id}`,
    taxable_amount: t.taxable_amount, tax_amount: t.tax_amount, applied_at: now, status: 'published', metadata: {},
  }))
}
