// Builders shared by the invoice integration tests: invoices are made the way the app makes
// them (plan with a FIXED ARREAR price, customer, subscription, the billing use case).
import assert from 'node:assert/strict'
import { created } from './fixtures.js'
import type { ApiClient, TestPlatform } from './platform.js'
import { billDueSubscriptions } from '../../billing-api/billing/bill-due.js'

export interface Tenant {
  tenantId: string
  api: ApiClient
}

/**
 * A subscription on a monthly FIXED ARREAR price of `amount`, started at `start`, billed up
 * to the clock; returns its invoices (SKIPPED ones included) oldest first.
 */
export async function billedInvoices(p: TestPlatform, t: Tenant, opts: { amount?: string; currency?: string; start?: string } = {}) {
  const currency = opts.currency ?? 'USD'
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Fee',
    prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency, amount: opts.amount ?? '25', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }],
  }))
  const customer = await created(t.api.post('/v1/customers', { external_id: `c-${Math.random().toString(36).slice(2)}` }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency, start_date: opts.start ?? '2026-08-01T00:00:00Z' }))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  const rows = await sql(p, `SELECT id FROM invoices WHERE subscription_id = ? ORDER BY period_start`, [sub.id])
  assert.ok(rows.length > 0, 'the subscription was billed')
  return { sub, customer, invoiceIds: rows.map((r: any) => r.id as string) }
}

export async function sql(p: TestPlatform, query: string, params: unknown[] = []): Promise<any[]> {
  return p.ctx.orm.em.fork().getConnection().execute(query, params)
}

/** Outbox events of one invoice, by name, in order. */
export async function eventNames(p: TestPlatform, invoiceId: string): Promise<string[]> {
  const rows = await sql(p, `SELECT event_name FROM system_events_outbox WHERE entity_id = ? ORDER BY created_at, id`, [invoiceId])
  return rows.map((r) => r.event_name)
}
