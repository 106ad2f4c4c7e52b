// usage_analytics and usage_breakdown of an invoice's usage lines (spec: InvoiceLineItem).
//
// - usage_analytics: the line's usage per event `source` (events sent without one are listed
//   under source ""), for every USAGE line.
// - usage_breakdown: the line's usage per value of the meter's aggregation.group_by property
//   (grouped_by: {<property>: <value>}; events without the property group under ""), only for
//   lines whose meter has a group_by; null otherwise.
// Costs and percentages are apportioned by usage-apportion.ts (the line amount before coupon
// discounts, exact to the currency). Both lists are stored as jsonb on the line when the line is
// written (migrations/0010_usage_analytics.sql) and are not recomputed on read.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { MeterSchema, type Meter } from '../meters/meter.entity.js'
import { usageReader } from '../meters/index.js'
import { D } from '../pricing/index.js'
import { usageCustomersByWindow } from '../subscriptions/index.js'
import { SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { InvoiceLineItemSchema, type Invoice, type InvoiceLineItem, type UsageAnalyticsItem, type UsageBreakdownItem } from '../invoices/invoice.entity.js'
import { apportionUsage, type GroupUsage } from './usage-apportion.js'

const groupValue = (aggregation: string, value: string, count: string) =>
  aggregation === 'AVG' ? (count === '0' ? '0' : D(value).div(count).toString()) : value

/** Reads ClickHouse only; no writes. */
export async function lineUsageAnalytics(
  ctx: BillingContext, meter: Meter, externalCustomerIds: string[], line: Pick<InvoiceLineItem, 'amount' | 'currency' | 'period_start' | 'period_end'>,
): Promise<{ usage_analytics: UsageAnalyticsItem[]; usage_breakdown: UsageBreakdownItem[] | null }> {
  const base = {
    tenantId: meter.tenant_id, environmentId: meter.environment_id, meterId: meter.id, aggregation: meter.aggregation.type,
    declaredGroupBy: meter.aggregation.group_by, externalCustomerIds, start: line.period_start!, end: line.period_end!,
  }
  const agg = meter.aggregation.type
  const read = usageReader(ctx)
  const bySource: GroupUsage<string>[] = (await read({ ...base, bySource: true })).map((r) => ({
    key: r.source ?? '', usage: groupValue(agg, r.value, r.event_count), event_count: Number(r.event_count),
  }))
  const usage_analytics = apportionUsage(bySource, agg, line.amount, line.currency, (k) => k)
    .map(({ key, ...rest }) => ({ source: key, ...rest }))
  const property = meter.aggregation.group_by
  if (!property) return { usage_analytics, usage_breakdown: null }
  const byGroup: GroupUsage<Record<string, string>>[] = (await read({ ...base, groupBy: [property] })).map((r) => ({
    key: { [property]: r.groups[property] ?? '' }, usage: groupValue(agg, r.value, r.event_count), event_count: Number(r.event_count),
  }))
  const usage_breakdown = apportionUsage(byGroup, agg, line.amount, line.currency, (k) => k[property])
    .map(({ key, ...rest }) => ({ grouped_by: key, ...rest }))
  return { usage_analytics, usage_breakdown }
}

/**
 * Sets usage_analytics / usage_breakdown on the invoice's USAGE lines (caller's transaction,
 * after the lines are created). The usage read is the subscription's customers' (as for the
 * line's quantity: a parent subscription pools its inherited children).
 */
export async function usageAnalyticsForLines(ctx: BillingContext, tx: EntityManager, invoice: Invoice): Promise<void> {
  await tx.flush()
  const scope: Scope = { tenant_id: invoice.tenant_id, environment_id: invoice.environment_id }
  const lines = await tx.find(InvoiceLineItemSchema, { ...scope, invoice_id: invoice.id, price_type: 'USAGE', meter_id: { $ne: null } })
  // late-usage adjustments (late-adjustments.ts) carry a difference, not a period's usage: no analytics
  const measurable = lines.filter((l) => l.period_start && l.period_end && !l.metadata?.adjustment_of)
  if (measurable.length === 0) return
  const sub = invoice.subscription_id ? await tx.findOne(SubscriptionSchema, { id: invoice.subscription_id, ...scope }) : null
  const own = sub ? null : await tx.findOneOrFail(CustomerSchema, { id: invoice.customer_id, ...scope })
  const meters = new Map((await tx.find(MeterSchema, { ...scope, id: { $in: [...new Set(measurable.map((l) => l.meter_id!))] } })).map((m) => [m.id, m]))
  // The same customers the line's quantity was measured for (a parent pools its children).
  const customersOf = sub ? usageCustomersByWindow(tx, sub) : async () => [own!.external_id]
  for (const line of measurable) {
    const meter = meters.get(line.meter_id!)
    if (!meter) continue
    const customers = await customersOf(line.period_start!, line.period_end!)
    Object.assign(line, await lineUsageAnalytics(ctx, meter, customers, line))
  }
  await tx.flush()
}
