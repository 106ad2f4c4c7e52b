// CSV downloads of invoices: one invoice's line items, and the invoices a search matches.
// The search export reuses searchInvoices (same body, same filters and order) and returns
// every match: the body's limit/offset are ignored, pages of EXPORT_PAGE are read in turn.
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import { toCsv, type CsvValue } from '../http/csv.js'
import type { Invoice, InvoiceLineItem } from './invoice.entity.js'
import { searchInvoices, type InvoiceSearch } from './search.js'
import { getInvoice } from './service.js'

export const LINE_ITEM_COLUMNS = [
  'line_item_id', 'display_name', 'price_type', 'meter_id', 'period_start', 'period_end', 'quantity', 'adjusted_entitlement_quantity',
  'amount', 'line_item_discount', 'invoice_level_discount', 'prepaid_credits_applied', 'currency',
] as const

export const INVOICE_COLUMNS = [
  'id', 'invoice_number', 'customer_id', 'subscription_id', 'invoice_status', 'payment_status', 'currency',
  'period_start', 'period_end', 'subtotal', 'total_discount', 'total_tax', 'total_prepaid_credits_applied', 'total', 'amount_due',
  'amount_paid', 'amount_remaining', 'created_at',
] as const

const EXPORT_PAGE = 1000
/** Beyond this many invoices the export asks for narrower filters instead of building a huge body. */
export const EXPORT_MAX_ROWS = 100_000

export interface CsvDownload {
  filename: string
  content: string
}

const safeFilename = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_')

const lineRow = (l: InvoiceLineItem): CsvValue[] => [
  l.id, l.display_name, l.price_type, l.meter_id, l.period_start, l.period_end, l.quantity, l.adjusted_entitlement_quantity ?? null,
  l.amount, l.line_item_discount, l.invoice_level_discount, l.prepaid_credits_applied, l.currency,
]

const invoiceRow = (i: Invoice): CsvValue[] => [
  i.id, i.invoice_number, i.customer_id, i.subscription_id, i.invoice_status, i.payment_status, i.currency,
  i.period_start, i.period_end, i.subtotal, i.total_discount, i.total_tax, i.total_prepaid_credits_applied, i.total, i.amount_due,
  i.amount_paid, i.amount_remaining, i.created_at,
]

/** One row per line item of the invoice. */
export async function invoiceLinesCsv(em: EntityManager, scope: Scope, id: string): Promise<CsvDownload> {
  const { invoice, lines } = await getInvoice(em, scope, id)
  return {
    filename: `invoice-${safeFilename(invoice.invoice_number ?? invoice.id)}.csv`,
    content: toCsv(LINE_ITEM_COLUMNS, lines.map(lineRow)),
  }
}

/** One row per invoice matching the search, in the search's order. */
export async function invoiceSearchCsv(em: EntityManager, scope: Scope, search: InvoiceSearch): Promise<CsvDownload> {
  const rows: CsvValue[][] = []
  for (let offset = 0; ; offset += EXPORT_PAGE) {
    const { items, total } = await searchInvoices(em, scope, { ...search, skip_line_items: true, limit: EXPORT_PAGE, offset })
    if (total > EXPORT_MAX_ROWS) throw new ValidationError(`the search matches ${total} invoices; narrow it to at most ${EXPORT_MAX_ROWS}`)
    rows.push(...items.map(invoiceRow))
    if (items.length < EXPORT_PAGE) break
  }
  return { filename: 'invoices.csv', content: toCsv(INVOICE_COLUMNS, rows) }
}
