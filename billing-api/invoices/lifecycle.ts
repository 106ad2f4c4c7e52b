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
import { loadFinalizeReads } from './finalize-reads.js'

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

/**
 * A block of `count` consecutive numbers of the environment's counter (the first one returned).
 * Taken in the finalizing transaction, after the invoices' amounts are applied, so the counter
 * row stays locked only for the end of that transaction; a rolled back block is given back, so
 * numbers stay gapless.
 */
async function takeInvoiceNumbers(tx: EntityManager, scope: Scope, count: number): Promise<number> {
  const rows = await tx.execute<{ first: string }[]>(
    `INSERT INTO invoice_sequences (tenant_id, environment_id, next_value) VALUES (?, ?, ?)
     ON CONFLICT (tenant_id, environment_id)
     DO UPDATE SET next_value = invoice_sequences.next_value + ?, updated_at = now()
     RETURNING next_value - ? AS first`,
    [scope.tenant_id, scope.environment_id, 1 + count, count, count],
  )
  return Number(rows[0].first)
}

/** Each subscription's next ordinals among its finalized invoices, for `counts` invoices per subscription, in one statement. */
async function takeBillingSequences(tx: EntityManager, scope: Scope, counts: Map<string, number>): Promise<Map<string, number>> {
  if (counts.size === 0) return new Map()
  const rows = await tx.execute<{ subscription_id: string; next_value: string }[]>(
    `INSERT INTO invoice_billing_sequences (subscription_id, tenant_id, environment_id, next_value)
     SELECT s.id, ?, ?, 1 + s.k FROM json_to_recordset(?::json) AS s(id text, k integer) ORDER BY s.id
     ON CONFLICT (subscription_id)
     DO UPDATE SET next_value = invoice_billing_sequences.next_value + EXCLUDED.next_value - 1, updated_at = now()
     RETURNING subscription_id, next_value`,
    [scope.tenant_id, scope.environment_id, JSON.stringify([...counts].map(([id, k]) => ({ id, k })))],
  )
  return new Map(rows.map((r) => [r.subscription_id, Number(r.next_value) - counts.get(r.subscription_id)!]))
}

/** DRAFT only; SKIPPED invoices are never finalized and never get a number. */
function checkFinalizable(invoice: Invoice): void {
  if (invoice.invoice_status === 'SKIPPED') {
    throw new InvalidOperationError(`invoice ${invoice.id} is SKIPPED (zero amount); skipped invoices are never finalized`)
  }
  if (invoice.invoice_status !== 'DRAFT') {
    throw new InvalidOperationError(`invoice ${invoice.id} is ${invoice.invoice_status}; only a DRAFT invoice can be finalized`)
  }
}

/**
 * Finalizes an invoice already locked by the caller's transaction. SKIPPED invoices are never
 * finalized and never get a number; any state but DRAFT is an invalid_operation.
 */
export async function finalizeLockedInvoice(ctx: BillingContext, tx: EntityManager, invoice: Invoice): Promise<Invoice> {
  await finalizeLockedInvoices(ctx, tx, [invoice])
  return invoice
}

/**
 * Finalizes invoices already locked by the caller's transaction (the finalization job's batch):
 * credits and taxes per invoice, then one block of numbers per environment and the
 * subscriptions' billing sequences in one statement, numbered in the order given.
 */
export async function finalizeLockedInvoices(ctx: BillingContext, tx: EntityManager, invoices: Invoice[]): Promise<void> {
  for (const invoice of invoices) checkFinalizable(invoice)
  // the batch's tax and wallet reads, once for all its invoices (finalize-reads.ts)
  const reads = invoices.length > 0 ? await loadFinalizeReads(tx, invoices) : undefined
  for (const invoice of invoices) {
    // Spec: "credits and taxes applied now" (finalize-amounts.ts), before the number is taken.
    await applyFinalAmounts(ctx, tx, invoice, reads)
  }
  const now = ctx.clock.now()
  const byScope = new Map<string, Invoice[]>()
  for (const invoice of invoices) {
    const key = `${invoice.tenant_id}\u0000${invoice.environment_id}`
    byScope.set(key, [...(byScope.get(key) ?? []), invoice])
  }
  for (const group of byScope.values()) {
    const scope = scopeOfInvoice(group[0])
    const first = await takeInvoiceNumbers(tx, scope, group.length)
    const perSubscription = new Map<string, number>()
    for (const i of group) if (i.subscription_id) perSubscription.set(i.subscription_id, (perSubscription.get(i.subscription_id) ?? 0) + 1)
    const sequences = await takeBillingSequences(tx, scope, perSubscription)
    group.forEach((invoice, n) => {
      invoice.invoice_number = formatInvoiceNumber(first + n)
      if (invoice.subscription_id) {
        const next = sequences.get(invoice.subscription_id)!
        sequences.set(invoice.subscription_id, next + 1)
        invoice.billing_sequence = next
      } else invoice.billing_sequence = null
      invoice.invoice_status = 'FINALIZED'
      invoice.finalized_at = now
      // A supplied issue_date wins over finalized_at (spec). Due on issue: payment terms are not
      // modelled yet, so due_date = issue_date unless one was supplied (manual invoices, PUT).
      invoice.issue_date ??= now
      invoice.due_date ??= invoice.issue_date
      publishSystemEvent(tx, scope, { event_name: 'invoice.finalized', entity_type: 'invoice', entity_id: invoice.id, payload: invoiceEventPayload(invoice) })
    })
  }
  await tx.flush()
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
