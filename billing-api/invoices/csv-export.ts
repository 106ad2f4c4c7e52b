// CSV downloads of invoices: one invoice's line items, and the invoices a search matches.
// The search export reuses searchInvoices (same body, same filters and order) and returns
// every match: the body's limit/offset are ignored, pages of EXPORT_PAGE are read in turn and
// streamed as they come (one page in memory, no row cap). The first page is read before the
// answer starts, so a refused search is still an ErrorResponse.
import { Readable } from 'node:stream'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { csvChunks, toCsv, type CsvValue } from '../http/csv.js'
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

export interface CsvDownload {
  filename: string
  content: string | Readable
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
  const page = async (offset: number) => {
    // A fresh identity map per page: the pages already sent are not kept.
    em.clear()
    return (await searchInvoices(em, scope, { ...search, skip_line_items: true, limit: EXPORT_PAGE, offset })).items
  }
  const first = await page(0)
  async function* pages(): AsyncGenerator<CsvValue[][]> {
    let items = first
    for (let offset = 0; ; ) {
      yield items.map(invoiceRow)
      if (items.length < EXPORT_PAGE) return
      offset += EXPORT_PAGE
      items = await page(offset)
    }
  }
  return { filename: 'invoices.csv', content: Readable.from(csvChunks(INVOICE_COLUMNS, pages())) }
}
