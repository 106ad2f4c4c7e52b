// The late-event rule, second half (README "Billing day"). A period is drafted only once the
// ingestion watermark has passed its end (bill-due.ts), so the draft holds every event that
// was acknowledged before the period ended. Events acknowledged later but dated inside the
// period (backdated, or delayed clients) are caught at finalization: before a batch of drafts
// is finalized, one ClickHouse statement per period finds the customers with usage in the period
// acknowledged at or after its end, and only those drafts are recomputed (recompute.ts) in the
// finalizing transaction, so the finalized invoice bills them. Usage acknowledged after the
// finalization is not billed on a finalized invoice (it stays in the usage API); see the README.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { BillingContext } from '../context.js'
import { queryLateUsageCustomers } from '../../clickhouse/queries/meter-usage.js'
import { InvoiceSchema, type Invoice } from '../invoices/invoice.entity.js'
import { SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { BatchReads } from './batch-reads.js'
import { recomputeInvoice } from './recompute.js'

const key = (i: Invoice) => `${i.tenant_id}\u0000${i.environment_id}\u0000${i.period_start!.getTime()}\u0000${i.period_end!.getTime()}`

/** FinalizeDueOptions.beforeFinalize: recomputes the drafts of `invoices` that have late usage. */
export function recomputeLateUsage(ctx: BillingContext): (tx: EntityManager, invoices: Invoice[]) => Promise<Invoice[]> {
  return async (tx, invoices) => {
    const cycles = invoices.filter((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE' && i.subscription_id && i.period_start && i.period_end)
    if (cycles.length === 0) return invoices
    const subs = new Map((await tx.find(SubscriptionSchema, { id: { $in: [...new Set(cycles.map((i) => i.subscription_id!))] } })).map((s) => [s.id, s]))
    const reads = await BatchReads.load(tx, [...subs.values()])
    const customersOf = new Map<string, string[]>()
    const groups = new Map<string, Invoice[]>()
    for (const i of cycles) {
      const sub = subs.get(i.subscription_id!)
      if (!sub) continue
      customersOf.set(i.id, await reads.customersOf(sub)(i.period_start!, i.period_end!))
      groups.set(key(i), [...(groups.get(key(i)) ?? []), i])
    }
    const late = new Set<string>()
    for (const group of groups.values()) {
      const { tenant_id, environment_id, period_start, period_end } = group[0]
      const customers = await queryLateUsageCustomers(ctx.ch, {
        tenantId: tenant_id, environmentId: environment_id, externalCustomerIds: [...new Set(group.flatMap((i) => customersOf.get(i.id) ?? []))],
        start: period_start!, end: period_end!, acknowledgedSince: period_end!,
      })
      const hit = new Set(customers)
      for (const i of group) if ((customersOf.get(i.id) ?? []).some((c) => hit.has(c))) late.add(i.id)
    }
    if (late.size === 0) return invoices
    const ready: Invoice[] = []
    for (const invoice of invoices) {
      if (!late.has(invoice.id)) {
        ready.push(invoice)
        continue
      }
      await recomputeInvoice(ctx, tx, { tenant_id: invoice.tenant_id, environment_id: invoice.environment_id }, invoice.id)
      const fresh = await tx.findOneOrFail(InvoiceSchema, { id: invoice.id }, { refresh: true })
      if (fresh.invoice_status === 'DRAFT') ready.push(fresh)
    }
    return ready
  }
}
