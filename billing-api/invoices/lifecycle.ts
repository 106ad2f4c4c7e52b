// Invoice state changes: DRAFT -> FINALIZED (finalize) and FINALIZED -> VOIDED (void).
// Each runs in one transaction that locks the invoice row (FOR UPDATE), checks the caller's
// expected version (409 version_conflict when stale), changes the row and writes its system
// event to the outbox, so the event commits or rolls back with the change.
import { LockMode } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError, NotFoundError, VersionConflictError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { InvoiceSchema, type Invoice } from './invoice.entity.js'
import { invoiceEventPayload } from './serialize.js'
import { applyFinalAmounts } from './finalize-amounts.js'

export interface ChangeOptions {
  /** the version the caller last read; a different current version is a version_conflict */
  version?: number
}

export const scopeOfInvoice = (inv: Invoice): Scope => ({ tenant_id: inv.tenant_id, environment_id: inv.environment_id })

/** Loads and row-locks the invoice in the caller's transaction. */
export async function lockInvoice(tx: EntityManager, scope: Scope, id: string, opts: ChangeOptions = {}): Promise<Invoice> {
  const invoice = await tx.findOne(
    InvoiceSchema,
    { id, ...scope, status: { $ne: 'deleted' } },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
  )
  if (!invoice) throw new NotFoundError('invoice', id)
  if (opts.version !== undefined && opts.version !== invoice.version) {
    throw new VersionConflictError(`invoice ${id} is at version ${invoice.version}, not ${opts.version}; reload and retry`)
  }
  return invoice
}

/**
 * Invoice numbers: `INV-` and the environment's counter, zero-padded to 6 digits
 * (INV-000001, ..., INV-999999, then INV-1000000). The counter row is created on first use
 * and incremented by the upsert's UPDATE ... RETURNING, whose row lock serialises
 * concurrent finalizations until their transactions end.
 */
export function formatInvoiceNumber(n: number): string {
  return `INV-${String(n).padStart(6, '0')}`
}

async function nextInvoiceNumber(tx: EntityManager, scope: Scope): Promise<string> {
  const rows = await tx.execute<{ value: string }[]>(
    `INSERT INTO invoice_sequences (tenant_id, environment_id, next_value) VALUES (?, ?, 2)
     ON CONFLICT (tenant_id, environment_id)
     DO UPDATE SET next_value = invoice_sequences.next_value + 1, updated_at = now()
     RETURNING next_value - 1 AS value`,
    [scope.tenant_id, scope.environment_id],
  )
  return formatInvoiceNumber(Number(rows[0].value))
}

/** The invoice's ordinal among its subscription's finalized invoices. */
async function nextBillingSequence(tx: EntityManager, scope: Scope, subscriptionId: string): Promise<number> {
  const rows = await tx.execute<{ value: number }[]>(
    `INSERT INTO invoice_billing_sequences (subscription_id, tenant_id, environment_id, next_value) VALUES (?, ?, ?, 2)
     ON CONFLICT (subscription_id)
     DO UPDATE SET next_value = invoice_billing_sequences.next_value + 1, updated_at = now()
     RETURNING next_value - 1 AS value`,
    [subscriptionId, scope.tenant_id, scope.environment_id],
  )
  return Number(rows[0].value)
}

/**
 * Finalizes an invoice already locked by the caller's transaction. SKIPPED invoices are never
 * finalized and never get a number; any state but DRAFT is an invalid_operation.
 */
export async function finalizeLockedInvoice(ctx: BillingContext, tx: EntityManager, invoice: Invoice): Promise<Invoice> {
  if (invoice.invoice_status === 'SKIPPED') {
    throw new InvalidOperationError(`invoice ${invoice.id} is SKIPPED (zero amount); skipped invoices are never finalized`)
  }
  if (invoice.invoice_status !== 'DRAFT') {
    throw new InvalidOperationError(`invoice ${invoice.id} is ${invoice.invoice_status}; only a DRAFT invoice can be finalized`)
  }
  const scope = scopeOfInvoice(invoice)
  // Spec: "credits and taxes applied now" (finalize-amounts.ts), before the number is taken.
  await applyFinalAmounts(ctx, tx, invoice)
  const now = ctx.clock.now()
  invoice.invoice_number = await nextInvoiceNumber(tx, scope)
  invoice.billing_sequence = invoice.subscription_id ? await nextBillingSequence(tx, scope, invoice.subscription_id) : null
  invoice.invoice_status = 'FINALIZED'
  invoice.finalized_at = now
  // A supplied issue_date wins over finalized_at (spec). Due on issue: payment terms are not
  // modelled yet, so due_date = issue_date unless one was supplied (manual invoices, PUT).
  invoice.issue_date ??= now
  invoice.due_date ??= invoice.issue_date
  publishSystemEvent(tx, scope, { event_name: 'invoice.finalized', entity_type: 'invoice', entity_id: invoice.id, payload: invoiceEventPayload(invoice) })
  await tx.flush()
  return invoice
}

/** POST /invoices/{id}/finalize: finalizes a DRAFT invoice now. */
export async function finalizeInvoice(ctx: BillingContext, em: EntityManager, scope: Scope, id: string, opts: ChangeOptions = {}): Promise<Invoice> {
  return em.transactional(async (tx) => finalizeLockedInvoice(ctx, tx, await lockInvoice(tx, scope, id, opts)))
}

/** FINALIZED and not paid -> VOIDED. A voided invoice no longer blocks its idempotency key. */
export async function voidInvoice(ctx: BillingContext, em: EntityManager, scope: Scope, id: string, opts: ChangeOptions = {}): Promise<Invoice> {
  return em.transactional(async (tx) => {
    const invoice = await lockInvoice(tx, scope, id, opts)
    if (invoice.invoice_status !== 'FINALIZED') {
      throw new InvalidOperationError(`invoice ${id} is ${invoice.invoice_status}; only a FINALIZED invoice can be voided`)
    }
    if (invoice.payment_status === 'SUCCEEDED' || invoice.payment_status === 'OVERPAID') {
      throw new InvalidOperationError(`invoice ${id} is paid (${invoice.payment_status}); a paid invoice cannot be voided`)
    }
    invoice.invoice_status = 'VOIDED'
    invoice.voided_at = ctx.clock.now()
    publishSystemEvent(tx, scope, { event_name: 'invoice.voided', entity_type: 'invoice', entity_id: invoice.id, payload: invoiceEventPayload(invoice) })
    await tx.flush()
    return invoice
  })
}
