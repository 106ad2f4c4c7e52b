// The invoice PDF use case: load the invoice, its lines, customer and tenant (all scoped by
// tenant and environment), build the view model and render it, caching the bytes per invoice
// version in invoice_documents (migrations/0002_documents.sql). Every change to an invoice
// increments its version, so a cached PDF is valid exactly while the version matches.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../../db/scope.js'
import { CustomerSchema, type Customer } from '../../customers/customer.entity.js'
import { TenantSchema, type Address, type Tenant } from '../../tenants/tenant.entity.js'
import type { Invoice, InvoiceLineItem } from '../invoice.entity.js'
import { getInvoice } from '../service.js'
import { renderInvoicePdf, type InvoicePdfView } from './render-invoice-pdf.js'

export type CacheOutcome = 'hit' | 'miss'

export interface InvoicePdf {
  invoice: Invoice
  content: Buffer
  cache: CacheOutcome
}

/** issue_date, else finalized_at, else created_at (spec: issue_date wins for the PDF). */
export const invoiceIssueDate = (inv: Invoice): Date => inv.issue_date ?? inv.finalized_at ?? inv.created_at

function addressLines(a: Address | null | undefined): string[] {
  if (!a) return []
  const cityLine = [a.address_city, a.address_state, a.address_postal_code].filter(Boolean).join(', ')
  return [a.address_line1, a.address_line2, cityLine, a.address_country].filter((l): l is string => !!l)
}

/** Pure: the stored records to the PDF's view model. */
export function invoicePdfView(invoice: Invoice, lines: InvoiceLineItem[], customer: Customer | null, tenant: Tenant): InvoicePdfView {
  const billing = tenant.billing_details ?? {}
  return {
    invoiceNumber: invoice.invoice_number,
    invoiceStatus: invoice.invoice_status,
    paymentStatus: invoice.payment_status,
    issueDate: invoiceIssueDate(invoice),
    dueDate: invoice.due_date,
    periodStart: invoice.period_start,
    periodEnd: invoice.period_end,
    currency: invoice.currency,
    seller: {
      name: tenant.name,
      lines: [...addressLines(billing.address), billing.email, billing.phone],
    },
    customer: {
      name: customer?.name || customer?.external_id || invoice.customer_id,
      externalId: customer?.external_id ?? invoice.customer_id,
      lines: customer
        ? [...addressLines(customer), customer.email]
        : [],
    },
    helpEmail: billing.help_email ?? null,
    lines: lines.map((l) => ({
      description: l.display_name || l.price_type || 'Charge',
      periodStart: l.period_start,
      periodEnd: l.period_end,
      quantity: l.quantity,
      amount: l.amount,
    })),
    totals: {
      subtotal: invoice.subtotal,
      totalDiscount: invoice.total_discount,
      totalTax: invoice.total_tax,
      prepaidCreditsApplied: invoice.total_prepaid_credits_applied,
      total: invoice.total,
      amountPaid: invoice.amount_paid,
      amountDue: invoice.amount_due,
      amountRemaining: invoice.amount_remaining,
    },
  }
}

/** The invoice's PDF: the cached one for its current version, unless forceGenerate. */
export async function invoicePdf(em: EntityManager, scope: Scope, id: string, opts: { forceGenerate?: boolean } = {}): Promise<InvoicePdf> {
  const { invoice, lines } = await getInvoice(em, scope, id)
  const conn = em.getConnection()
  if (!opts.forceGenerate) {
    const [cached] = await conn.execute<{ content: Buffer }[]>(
      `SELECT content FROM invoice_documents
        WHERE tenant_id = ? AND environment_id = ? AND invoice_id = ? AND kind = 'pdf' AND invoice_version = ?`,
      [scope.tenant_id, scope.environment_id, invoice.id, invoice.version],
    )
    if (cached) return { invoice, content: cached.content, cache: 'hit' }
  }
  const customer = await em.findOne(CustomerSchema, { id: invoice.customer_id, ...scope })
  const tenant = await em.findOneOrFail(TenantSchema, { id: scope.tenant_id })
  const content = await renderInvoicePdf(invoicePdfView(invoice, lines, customer, tenant))
  // One row per invoice and kind: the newest render replaces the older version's. Concurrent
  // renders of the same version produce the same bytes, so the last writer wins harmlessly.
  await conn.execute(
    `INSERT INTO invoice_documents (invoice_id, tenant_id, environment_id, kind, invoice_version, content, created_at)
     VALUES (?, ?, ?, 'pdf', ?, ?, now())
     ON CONFLICT (invoice_id, kind) DO UPDATE
       SET invoice_version = EXCLUDED.invoice_version, content = EXCLUDED.content, created_at = EXCLUDED.created_at
       WHERE invoice_documents.tenant_id = EXCLUDED.tenant_id AND invoice_documents.environment_id = EXCLUDED.environment_id
         AND invoice_documents.invoice_version <= EXCLUDED.invoice_version`,
    [invoice.id, scope.tenant_id, scope.environment_id, invoice.version, content],
  )
  return { invoice, content, cache: 'miss' }
}
