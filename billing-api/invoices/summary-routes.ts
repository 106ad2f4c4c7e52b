// GET /customers/{id}/invoices/summary (Flexprice's path): a customer's FINALIZED invoices added
// up per currency. Revenue is their total; unpaid is what is left to pay on those not paid in
// full; overdue is the unpaid part of those past their due date. Meterline does not split the
// unpaid amount by charge type: unpaid_fixed_charges and unpaid_usage_charges are null.
import type { FastifyInstance } from 'fastify'
import type { Decimal } from 'decimal.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { findInScope } from '../db/scoped-records.js'
import { idParams } from '../http/schemas.js'
import { typed } from '../http/typed-routes.js'
import { D, toMoneyString } from '../pricing/index.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { InvoiceSchema } from './invoice.entity.js'
import { customerInvoiceSummarySchema } from './response-schemas.js'

interface Sums { count: number; revenue: Decimal; unpaid: Decimal; unpaidCount: number; overdue: Decimal; overdueCount: number }

export async function invoiceSummaryRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.get('/customers/:id/invoices/summary', { schema: { response: { 200: customerInvoiceSummarySchema }, tags: ['invoices'], params: idParams } }, async (request) => {
    const scope = scopeOf(request)
    const em = ctx.orm.em.fork()
    const customer = await findInScope(em, CustomerSchema, scope, request.params.id, 'customer')
    const invoices = await em.find(InvoiceSchema, { ...scope, customer_id: customer.id, status: 'published', invoice_status: 'FINALIZED' }, { orderBy: { created_at: 'asc', id: 'asc' } })
    const now = ctx.clock.now()
    const byCurrency = new Map<string, Sums>()
    for (const inv of invoices) {
      const s = byCurrency.get(inv.currency) ?? { count: 0, revenue: D(0), unpaid: D(0), unpaidCount: 0, overdue: D(0), overdueCount: 0 }
      s.count++
      s.revenue = s.revenue.plus(inv.total)
      const left = D(inv.amount_remaining)
      if (left.gt(0)) {
        s.unpaid = s.unpaid.plus(left)
        s.unpaidCount++
        if (inv.due_date && inv.due_date < now) {
          s.overdue = s.overdue.plus(left)
          s.overdueCount++
        }
      }
      byCurrency.set(inv.currency, s)
    }
    const summaries = [...byCurrency].map(([currency, s]) => ({
      customer_id: customer.id, currency, total_invoice_count: s.count, total_revenue_amount: toMoneyString(s.revenue, currency),
      total_unpaid_amount: toMoneyString(s.unpaid, currency), unpaid_invoice_count: s.unpaidCount,
      total_overdue_amount: toMoneyString(s.overdue, currency), overdue_invoice_count: s.overdueCount,
      unpaid_fixed_charges: null, unpaid_usage_charges: null,
    }))
    // the currency with the most invoices, the first one on a tie
    const main = [...byCurrency].reduce<[string, Sums] | null>((best, e) => (!best || e[1].count > best[1].count ? e : best), null)
    return { customer_id: customer.id, default_currency: main?.[0] ?? null, summaries }
  })
}
