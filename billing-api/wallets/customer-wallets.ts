// A customer's wallets: the live and the closed ones, oldest first. The routes page them
// (customer-routes.ts: `{items, pagination}`, as every list of the spec).
import type { EntityManager } from '@mikro-orm/postgresql'
import { NotFoundError, ValidationError } from '../../platform/errors.js'
import type { Clock } from '../../platform/clock.js'
import type { Scope } from '../db/scope.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { withBalances, type WalletView } from './wallet-rows.js'
import { WalletSchema } from './wallet.entity.js'

/** The customer by its id or by its lookup key (external_id): exactly one of them. */
export interface CustomerRef {
  id?: string
  lookup_key?: string
}

export async function customerWallets(em: EntityManager, clock: Clock, scope: Scope, ref: CustomerRef): Promise<WalletView[]> {
  if ((ref.id === undefined) === (ref.lookup_key === undefined)) {
    throw new ValidationError('give the customer as exactly one of id and lookup_key (its external_id)', ref.id === undefined ? 'id' : 'lookup_key')
  }
  const where = ref.id !== undefined ? { id: ref.id } : { external_id: ref.lookup_key! }
  const customer = await em.findOne(CustomerSchema, { ...scope, ...where, status: { $ne: 'deleted' } })
  if (!customer) throw new NotFoundError('customer', ref.id ?? ref.lookup_key)
  const wallets = await em.find(
    WalletSchema,
    { ...scope, customer_id: customer.id, status: { $in: ['published', 'archived'] } },
    { orderBy: { created_at: 'asc', id: 'asc' } },
  )
  return withBalances(em, clock, scope, wallets)
}
