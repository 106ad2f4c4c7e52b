// Loading a credit note with its lines, and the amounts an invoice's live notes already credit.
import type { EntityManager } from '@mikro-orm/postgresql'
import { LockMode } from '@mikro-orm/core'
import type { Decimal } from 'decimal.js'
import { NotFoundError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import { D } from '../pricing/index.js'
import { CreditNoteLineItemSchema, CreditNoteSchema, type CreditNote, type CreditNoteLineItem } from './credit-note.entity.js'

export interface CreditNoteView {
  note: CreditNote
  lines: CreditNoteLineItem[]
}

export async function findCreditNote(em: EntityManager, scope: Scope, id: string, lock = false): Promise<CreditNote> {
  const note = await em.findOne(
    CreditNoteSchema,
    { id, ...scope, status: { $ne: 'deleted' } },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : {},
  )
  if (!note) throw new NotFoundError('credit note', id)
  return note
}

export async function withLines(em: EntityManager, scope: Scope, note: CreditNote): Promise<CreditNoteView> {
  const lines = await em.find(CreditNoteLineItemSchema, { ...scope, credit_note_id: note.id }, { orderBy: { created_at: 'asc', id: 'asc' } })
  return { note, lines }
}

export async function getCreditNote(em: EntityManager, scope: Scope, id: string): Promise<CreditNoteView> {
  return withLines(em, scope, await findCreditNote(em, scope, id))
}

/** Per invoice line, what the invoice's DRAFT and FINALIZED notes credit; and what its DRAFT notes reserve in all. */
export async function creditedOnInvoice(tx: EntityManager, scope: Scope, invoiceId: string): Promise<{ perLine: Map<string, Decimal>; reserved: Decimal; count: number }> {
  const conn = tx.getConnection()
  const ctx: unknown = tx.getTransactionContext()
  const perLine = (await conn.execute(
    `SELECT l.invoice_line_item_id, sum(l.amount)::text AS credited
       FROM credit_note_line_items l JOIN credit_notes n ON n.id = l.credit_note_id
      WHERE n.tenant_id = ? AND n.environment_id = ? AND n.invoice_id = ? AND n.credit_note_status IN ('DRAFT', 'FINALIZED')
      GROUP BY l.invoice_line_item_id`,
    [scope.tenant_id, scope.environment_id, invoiceId], 'all', ctx,
  )) as { invoice_line_item_id: string; credited: string }[]
  const [totals] = (await conn.execute(
    `SELECT coalesce(sum(total_amount) FILTER (WHERE credit_note_status = 'DRAFT'), 0)::text AS reserved, count(*)::int AS count
       FROM credit_notes WHERE tenant_id = ? AND environment_id = ? AND invoice_id = ?`,
    [scope.tenant_id, scope.environment_id, invoiceId], 'all', ctx,
  )) as { reserved: string; count: number }[]
  return { perLine: new Map(perLine.map((r) => [r.invoice_line_item_id, D(r.credited)])), reserved: D(totals.reserved), count: totals.count }
}
