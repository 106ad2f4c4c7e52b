// `expand` of POST /invoices/search: a comma-separated list of related records to embed in each
// invoice (spec Invoice: customer, subscription). Each is read once for the whole page, in scope.
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { serializeCustomer } from '../customers/index.js'
import { SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { serializeSubscription } from '../subscriptions/index.js'
import type { Invoice } from './invoice.entity.js'

export const EXPANSIONS = ['customer', 'subscription'] as const
type Expansion = (typeof EXPANSIONS)[number]

/** `customer, subscription` -> ['customer', 'subscription']; an unknown name is a validation error. */
export function parseExpand(expand: string | undefined): Expansion[] {
  if (expand === undefined || expand.trim() === '') return []
  const names = [...new Set(expand.split(',').map((s) => s.trim()))]
  for (const n of names) {
    if (!(EXPANSIONS as readonly string[]).includes(n)) throw new ValidationError(`expand: unknown expansion "${n}"; one of ${EXPANSIONS.join(', ')}`, 'expand')
  }
  return names as Expansion[]
}

export type Expanded = Map<string, Record<string, unknown>>

/** Per invoice id, the embedded records asked for. */
export async function expandInvoices(em: EntityManager, scope: Scope, invoices: Invoice[], expansions: Expansion[]): Promise<Expanded> {
  const out: Expanded = new Map(invoices.map((i) => [i.id, {}]))
  if (expansions.includes('customer')) {
    const ids = [...new Set(invoices.map((i) => i.customer_id))]
    const customers = new Map((await em.find(CustomerSchema, { ...scope, id: { $in: ids } })).map((c) => [c.id, c]))
    for (const i of invoices) {
      const c = customers.get(i.customer_id)
      out.get(i.id)!.customer = c ? serializeCustomer(c) : null
    }
  }
  if (expansions.includes('subscription')) {
    const ids = [...new Set(invoices.flatMap((i) => (i.subscription_id ? [i.subscription_id] : [])))]
    const subs = new Map(ids.length ? (await em.find(SubscriptionSchema, { ...scope, id: { $in: ids } })).map((s) => [s.id, s]) : [])
    for (const i of invoices) {
      const s = i.subscription_id ? subs.get(i.subscription_id) : undefined
      out.get(i.id)!.subscription = s ? serializeSubscription(s) : null
    }
  }
  return out
}
