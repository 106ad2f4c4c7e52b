// Reading an invoice with its lines and amount records.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { findInScope } from '../db/scoped-records.js'
import type { AppliedTax, CouponApplication } from './amounts.entity.js'
import { invoiceAmountRecords } from './amount-records.js'
import { InvoiceLineItemSchema, InvoiceSchema, type Invoice, type InvoiceLineItem } from './invoice.entity.js'

export interface InvoiceDetail {
  invoice: Invoice
  lines: InvoiceLineItem[]
  couponApplications: CouponApplication[]
  taxes: AppliedTax[]
}

export async function getInvoice(em: EntityManager, scope: Scope, id: string): Promise<InvoiceDetail> {
  const invoice = await findInScope(em, InvoiceSchema, scope, id, 'invoice')
  const lines = await em.find(InvoiceLineItemSchema, { invoice_id: id, ...scope }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const { couponApplications, taxes } = await invoiceAmountRecords(em, scope, id)
  return { invoice, lines, couponApplications, taxes }
}
