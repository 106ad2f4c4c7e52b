// InvoiceReads (invoice-reads.ts) for a claimed billing batch: the rows every invoice of the batch
// reads are loaded once, in a handful of statements per scope, and each invoice's reads are
// answered from them in memory. What the batch did not load exactly (a subscription with live
// threshold invoices in its period, a recomputation, a window before the loaded line items)
// falls back to the direct per-invoice read, so every answer equals the direct one.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { MeterSchema, type Meter } from '../meters/meter.entity.js'
import { PriceSchema, type Price } from '../plans/price.entity.js'
import { InvoiceSchema } from '../invoices/invoice.entity.js'
import { SubscriptionLineItemSchema, SubscriptionSchema, type Subscription, type SubscriptionLineItem } from '../subscriptions/subscription.entity.js'
import { chargesAfterCut } from './usage-cuts.js'
import { usageCapsOf } from './entitlement-limits.js'
import { attachedCouponsOf } from './invoice-coupons.js'
import type { AttachedCoupon } from './apply-coupons.js'
import { directReads, type InvoiceReads } from './invoice-reads.js'
import { plainFind } from '../db/plain-rows.js'

const scopeKey = (s: Scope) => `${s.tenant_id}\u0000${s.environment_id}`

interface ScopeRows {
  lineItems: Map<string, SubscriptionLineItem[]>
  /** archived line items ending after this instant were loaded */
  archivedAfter: number
  prices: Map<string, Price>
  meters: Map<string, Meter>
  withThresholdInvoices: Set<string>
  /** external id by customer id (the batch's customers and their inherited children's) */
  externalIds: Map<string, string>
  children: Map<string, Subscription[]>
  caps: (sub: Subscription, meterIds: string[]) => Map<string, string | null>
  capsAt: number
  /** the subscriptions `caps` answers for */
  capsSubs: Set<string>
  coupons: Map<string, AttachedCoupon[]>
}

export class BatchReads implements InvoiceReads {
  private readonly scopes = new Map<string, ScopeRows>()
  private readonly direct: InvoiceReads

  private constructor(em: EntityManager) {
    this.direct = directReads(em)
  }

  /** Loads the rows of `subs` (a claimed batch billed for their current periods). */
  static async load(em: EntityManager, subs: Subscription[]): Promise<BatchReads> {
    const reads = new BatchReads(em)
    const groups = new Map<string, Subscription[]>()
    for (const s of subs) groups.set(scopeKey(s), [...(groups.get(scopeKey(s)) ?? []), s])
    for (const [key, group] of groups) reads.scopes.set(key, await loadScope(em, group))
    return reads
  }

  private rows(sub: Subscription): ScopeRows | undefined {
    const rows = this.scopes.get(scopeKey(sub))
    return rows?.lineItems.has(sub.id) ? rows : undefined
  }

  lineItems(sub: Subscription, periodStart: Date): Promise<SubscriptionLineItem[]> {
    const rows = this.rows(sub)
    if (!rows || periodStart.getTime() < rows.archivedAfter) return this.direct.lineItems(sub, periodStart)
    return Promise.resolve(rows.lineItems.get(sub.id)!.filter((l) => l.status === 'published' || (l.status === 'archived' && l.end_date !== null && l.end_date > periodStart)))
  }

  prices(sub: Subscription, ids: string[]): Promise<Price[]> {
    const rows = this.rows(sub)
    if (!rows || ids.some((id) => !rows.prices.has(id))) return this.direct.prices(sub, ids)
    return Promise.resolve([...new Set(ids)].map((id) => rows.prices.get(id)!))
  }

  meters(sub: Subscription, ids: string[]): Promise<Meter[]> {
    const rows = this.rows(sub)
    if (!rows) return this.direct.meters(sub, ids)
    return Promise.resolve(ids.flatMap((id) => (rows.meters.has(id) ? [rows.meters.get(id)!] : [])))
  }

  thresholdCuts(...args: Parameters<InvoiceReads['thresholdCuts']>): ReturnType<InvoiceReads['thresholdCuts']> {
    const [sub, charges, , , reason] = args
    const rows = this.rows(sub)
    if (!rows || rows.withThresholdInvoices.has(sub.id)) return this.direct.thresholdCuts(...args)
    return Promise.resolve(chargesAfterCut(charges, reason, null))
  }

  customersOf(sub: Subscription): (start: Date, end: Date) => Promise<string[]> {
    const rows = this.rows(sub)
    if (!rows) return this.direct.customersOf(sub)
    return (start, end) => {
      const customerIds = [sub.customer_id]
      if (sub.subscription_type === 'PARENT') {
        const live = (rows.children.get(sub.id) ?? []).filter((c) => c.start_date < end && (c.end_date === null || c.end_date > start))
        customerIds.push(...live.map((c) => c.customer_id))
      }
      const ids = customerIds.flatMap((id) => (rows.externalIds.has(id) ? [rows.externalIds.get(id)!] : []))
      return Promise.resolve([...new Set(ids)].sort())
    }
  }

  caps(sub: Subscription, meterIds: string[], at: Date): Promise<Map<string, string | null>> {
    const rows = this.rows(sub)
    if (!rows || at.getTime() !== rows.capsAt || !rows.capsSubs.has(sub.id) || meterIds.some((id) => !rows.meters.has(id))) return this.direct.caps(sub, meterIds, at)
    return Promise.resolve(rows.caps(sub, meterIds))
  }

  /**
   * What the batch's usage read needs for subscriptions of one scope and period: the meters of
   * their usage line items and the external ids of their customers (a parent's children's too).
   */
  usageScope(subs: Subscription[]): { meters: Map<string, Meter['aggregation']['type']>; customers: string[] } {
    const meters = new Map<string, Meter['aggregation']['type']>()
    const customers = new Set<string>()
    for (const sub of subs) {
      const rows = this.rows(sub)
      if (!rows) continue
      for (const l of rows.lineItems.get(sub.id)!) {
        const meter = l.meter_id ? rows.meters.get(l.meter_id) : undefined
        if (meter) meters.set(meter.id, meter.aggregation.type)
      }
      for (const id of [sub.customer_id, ...(rows.children.get(sub.id) ?? []).map((c) => c.customer_id)]) {
        const ext = rows.externalIds.get(id)
        if (ext !== undefined) customers.add(ext)
      }
    }
    return { meters, customers: [...customers] }
  }

  coupons(scope: Scope, subscriptionId: string, exceptInvoiceId?: string): Promise<AttachedCoupon[]> {
    const rows = this.scopes.get(scopeKey(scope))
    if (!rows || exceptInvoiceId || !rows.lineItems.has(subscriptionId)) return this.direct.coupons(scope, subscriptionId, exceptInvoiceId)
    return Promise.resolve(rows.coupons.get(subscriptionId) ?? [])
  }
}

async function loadScope(em: EntityManager, subs: Subscription[]): Promise<ScopeRows> {
  const scope: Scope = { tenant_id: subs[0].tenant_id, environment_id: subs[0].environment_id }
  const ids = subs.map((s) => s.id)
  const archivedAfter = Math.min(...subs.map((s) => s.current_period_start.getTime()))
  const all = await plainFind(
    em, SubscriptionLineItemSchema,
    { subscription_id: { $in: ids }, ...scope, $or: [{ status: 'published' }, { status: 'archived', end_date: { $gt: new Date(archivedAfter) } }] },
    { orderBy: { created_at: 'asc', id: 'asc' } },
  )
  const lineItems = new Map<string, SubscriptionLineItem[]>(ids.map((id) => [id, []]))
  for (const l of all) lineItems.get(l.subscription_id)!.push(l)
  const priceIds = [...new Set(all.map((l) => l.price_id))]
  const prices = new Map((priceIds.length ? await plainFind(em, PriceSchema, { id: { $in: priceIds }, ...scope }) : []).map((p) => [p.id, p]))
  const meterIds = [...new Set([...prices.values()].flatMap((p) => (p.meter_id ? [p.meter_id] : [])))]
  const meters = new Map((meterIds.length ? await plainFind(em, MeterSchema, { id: { $in: meterIds }, ...scope }) : []).map((m) => [m.id, m]))
  const threshold = await plainFind(
    em, InvoiceSchema,
    { ...scope, subscription_id: { $in: ids }, billing_reason: 'AUTO_INVOICE_THRESHOLD', invoice_status: { $ne: 'VOIDED' }, status: { $ne: 'deleted' } },
    { fields: ['subscription_id'] },
  )
  const parents = subs.filter((s) => s.subscription_type === 'PARENT').map((s) => s.id)
  const children = new Map<string, Subscription[]>()
  if (parents.length) {
    for (const c of await plainFind(em, SubscriptionSchema, { ...scope, parent_subscription_id: { $in: parents }, subscription_type: 'INHERITED', status: 'published' })) {
      children.set(c.parent_subscription_id!, [...(children.get(c.parent_subscription_id!) ?? []), c])
    }
  }
  const customerIds = [...new Set([...subs.map((s) => s.customer_id), ...[...children.values()].flat().map((c) => c.customer_id)])]
  const externalIds = new Map((await plainFind(em, CustomerSchema, { id: { $in: customerIds }, ...scope })).map((c) => [c.id, c.external_id]))
  // Caps are read at the period start, the instant every cycle invoice of one period asks for.
  const capsAt = subs[0].current_period_start.getTime()
  const sameStart = subs.filter((s) => s.current_period_start.getTime() === capsAt)
  const caps = await usageCapsOf(em, scope, sameStart, meterIds, new Date(capsAt))
  const coupons = await attachedCouponsOf(em, scope, ids)
  return {
    lineItems, archivedAfter, prices, meters, withThresholdInvoices: new Set(threshold.map((i) => i.subscription_id!)),
    externalIds, children, caps, capsAt, capsSubs: new Set(sameStart.map((s) => s.id)), coupons,
  }
}
