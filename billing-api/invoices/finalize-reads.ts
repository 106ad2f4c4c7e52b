// The reads of a finalization batch, loaded once for all its invoices (one statement per table
// and scope) instead of three or four per invoice: the taxes already applied to the invoices,
// the auto-apply tax associations of their subscriptions, customers and tenant with their rates,
// and which customers have a PREPAID wallet. Each invoice's answer equals the per-invoice read's
// (same filters; the associations in the same order, since a subset of rows sorted by the
// database keeps that order). What the batch cannot answer exactly goes the per-invoice way:
// an invoice with taxes already applied (a retried finalization) and a customer with a wallet
// (the wallet ledger's debit, its lock and its balance read are per invoice).
import type { EntityManager } from '@mikro-orm/postgresql'
import { plainFind } from '../db/plain-rows.js'
import type { Scope } from '../db/scope.js'
import { TaxAssociationSchema, type TaxAssociation } from '../taxes/tax-association.entity.js'
import { TaxRateSchema, type TaxRate } from '../taxes/tax-rate.entity.js'
import { WalletSchema } from '../wallets/wallet.entity.js'
import { AppliedTaxSchema } from './amounts.entity.js'
import type { Invoice } from './invoice.entity.js'

export interface FinalizeReads {
  /** the auto-apply associations of the invoice (in the per-invoice read's order) and their rates; undefined: read them per invoice */
  taxes(invoice: Invoice): { associations: TaxAssociation[]; rates: Map<string, TaxRate> } | undefined
  /** false when the customer has no PREPAID wallet in the invoice's currency; undefined: look per invoice */
  mayHaveWallet(invoice: Invoice): false | undefined
}

const scopeKey = (s: Scope) => `${s.tenant_id}\u0000${s.environment_id}`

interface ScopeReads {
  invoices: Set<string>
  withTaxes: Set<string>
  associations: TaxAssociation[]
  rates: Map<string, TaxRate>
  wallets: Set<string>
}

/** Loads the reads of `invoices` (locked by the caller's transaction). */
export async function loadFinalizeReads(tx: EntityManager, invoices: Invoice[]): Promise<FinalizeReads> {
  const groups = new Map<string, Invoice[]>()
  for (const i of invoices) {
    const group = groups.get(scopeKey(i))
    if (group) group.push(i)
    else groups.set(scopeKey(i), [i])
  }
  const scopes = new Map<string, ScopeReads>()
  for (const [key, group] of groups) scopes.set(key, await loadScope(tx, group))
  const of = (invoice: Invoice) => {
    const s = scopes.get(scopeKey(invoice))
    return s?.invoices.has(invoice.id) ? s : undefined
  }
  return {
    taxes(invoice) {
      const s = of(invoice)
      if (!s || s.withTaxes.has(invoice.id)) return undefined
      const associations = s.associations.filter((a) =>
        (a.entity_type === 'subscription' && invoice.subscription_id !== null && a.entity_id === invoice.subscription_id)
        || (a.entity_type === 'customer' && a.entity_id === invoice.customer_id)
        || (a.entity_type === 'tenant' && a.entity_id === invoice.tenant_id))
      return { associations, rates: s.rates }
    },
    mayHaveWallet(invoice) {
      const s = of(invoice)
      return s && !s.wallets.has(`${invoice.customer_id}\u0000${invoice.currency}`) ? false : undefined
    },
  }
}

async function loadScope(tx: EntityManager, invoices: Invoice[]): Promise<ScopeReads> {
  const scope: Scope = { tenant_id: invoices[0].tenant_id, environment_id: invoices[0].environment_id }
  const ids = invoices.map((i) => i.id)
  const withTaxes = new Set((await plainFind(tx, AppliedTaxSchema, { ...scope, entity_id: { $in: ids } }, { fields: ['entity_id'] })).map((t) => t.entity_id))
  const subscriptions = [...new Set(invoices.flatMap((i) => (i.subscription_id ? [i.subscription_id] : [])))]
  const customers = [...new Set(invoices.map((i) => i.customer_id))]
  const associations = await plainFind(
    tx, TaxAssociationSchema,
    {
      ...scope, status: 'published', auto_apply: true,
      $or: [
        ...(subscriptions.length ? [{ entity_type: 'subscription' as const, entity_id: { $in: subscriptions } }] : []),
        { entity_type: 'customer' as const, entity_id: { $in: customers } },
        { entity_type: 'tenant' as const, entity_id: scope.tenant_id },
      ],
    },
    { orderBy: { priority: 'asc', created_at: 'asc', id: 'asc' } },
  )
  // Archived rates keep charging the associations made while they were published.
  const rateIds = [...new Set(associations.map((a) => a.tax_rate_id))]
  const rates = new Map((rateIds.length ? await plainFind(tx, TaxRateSchema, { ...scope, id: { $in: rateIds }, status: { $ne: 'deleted' } }) : []).map((r) => [r.id, r]))
  const wallets = await plainFind(tx, WalletSchema, { ...scope, customer_id: { $in: customers }, wallet_type: 'PREPAID', status: 'published' }, { fields: ['customer_id', 'currency'] })
  return {
    invoices: new Set(ids), withTaxes, associations, rates,
    wallets: new Set(wallets.map((w) => `${w.customer_id}\u0000${w.currency}`)),
  }
}
