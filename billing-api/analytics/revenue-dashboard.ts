// POST /dashboard/revenue-dashboard: revenue per customer from FINALIZED invoices whose
// finalized_at falls in [start_time, end_time), per currency (amounts in different currencies
// are never added), sorted by total revenue descending (ties: customer id, currency), with a
// time series per window (DAY, WEEK from Monday, MONTH; UTC; windows without revenue are
// absent). Revenue is the invoice total; sums are Postgres numeric, sent as exact strings.
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import type { Scope } from '../db/scope.js'

export const REVENUE_WINDOWS = ['DAY', 'WEEK', 'MONTH'] as const
export type RevenueWindow = (typeof REVENUE_WINDOWS)[number]

export interface RevenueDashboardRequest {
  start_time: string
  end_time: string
  window_size?: RevenueWindow
  currency?: string
  limit: number
  offset: number
}

interface TotalRow { customer_id: string; currency: string; revenue: string; invoice_count: number; total_rows: number }
interface SeriesRow { customer_id: string; currency: string; window_start: string; revenue: string; invoice_count: number }

export async function revenueDashboard(em: EntityManager, scope: Scope, req: RevenueDashboardRequest) {
  const start = new Date(req.start_time)
  const end = new Date(req.end_time)
  if (!(start < end)) throw new ValidationError('start_time must be before end_time', 'start_time')
  const window = req.window_size ?? 'MONTH'
  const conn = em.getConnection()
  const where = `tenant_id = ? AND environment_id = ? AND status <> 'deleted' AND invoice_status = 'FINALIZED'
    AND finalized_at >= ? AND finalized_at < ? AND (?::text IS NULL OR currency = ?)`
  const params = [scope.tenant_id, scope.environment_id, start, end, req.currency ?? null, req.currency ?? null]
  const totals = (await conn.execute(
    `SELECT customer_id, currency, sum(total)::text AS revenue, count(*)::int AS invoice_count, count(*) OVER ()::int AS total_rows
       FROM invoices WHERE ${where}
      GROUP BY customer_id, currency ORDER BY sum(total) DESC, customer_id, currency LIMIT ? OFFSET ?`,
    [...params, req.limit, req.offset],
  )) as TotalRow[]
  const ids = [...new Set(totals.map((t) => t.customer_id))]
  const series = ids.length
    ? ((await conn.execute(
      `SELECT customer_id, currency, to_char(date_trunc(?, finalized_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS.000"Z"') AS window_start,
              sum(total)::text AS revenue, count(*)::int AS invoice_count
         FROM invoices WHERE ${where} AND customer_id IN (?)
        GROUP BY 1, 2, 3 ORDER BY 3`,
      [window.toLowerCase(), ...params, ids],
    )) as SeriesRow[])
    : []
  const customers = new Map((ids.length ? await em.find(CustomerSchema, { ...scope, id: { $in: ids } }) : []).map((c) => [c.id, c]))
  return {
    start_time: start.toISOString(),
    end_time: end.toISOString(),
    window_size: window,
    items: totals.map((t) => ({
      customer_id: t.customer_id,
      external_customer_id: customers.get(t.customer_id)?.external_id ?? null,
      customer_name: customers.get(t.customer_id)?.name ?? null,
      currency: t.currency,
      total_revenue: t.revenue,
      invoice_count: t.invoice_count,
      series: series.filter((s) => s.customer_id === t.customer_id && s.currency === t.currency)
        .map((s) => ({ window_start: s.window_start, revenue: s.revenue, invoice_count: s.invoice_count })),
    })),
    pagination: { limit: req.limit, offset: req.offset, total: totals[0]?.total_rows ?? 0 },
  }
}
