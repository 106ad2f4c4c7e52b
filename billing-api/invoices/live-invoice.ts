// Invoice idempotency (spec Errors 12): a key is held by the invoice carrying it unless that
// invoice is VOIDED or deleted, which frees the key. Every idempotency check reads through here.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { InvoiceSchema, type Invoice } from './invoice.entity.js'

export const liveInvoiceWithKey = (scope: Scope, idempotencyKey: string) =>
  ({ ...scope, idempotency_key: idempotencyKey, invoice_status: { $ne: 'VOIDED' as const }, status: { $ne: 'deleted' } })

export function findLiveInvoice(em: EntityManager, scope: Scope, idempotencyKey: string): Promise<Invoice | null> {
  return em.findOne(InvoiceSchema, liveInvoiceWithKey(scope, idempotencyKey))
}
