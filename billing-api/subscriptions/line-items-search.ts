// POST /subscriptions/lineitems/search: line items of the caller's tenant and environment by
// subscription, price, customer, status and date windows; sorted, paginated.
import type { QueryOrderMap } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { SubscriptionLineItemSchema, type SubscriptionLineItem } from './subscription.entity.js'

export const LINE_ITEM_STATUSES = ['published', 'archived', 'deleted'] as const
export const LINE_ITEM_SORT_FIELDS = ['created_at', 'start_date', 'end_date'] as const

export interface SubscriptionLineItemFilter {
  subscription_ids?: string[]
  price_ids?: string[]
  customer_id?: string
  status?: (typeof LINE_ITEM_STATUSES)[number]
  /** line items whose [start_date, end_date) contains this instant (an open end never ends) */
  active_at?: string
  start_date_gte?: string
  start_date_lte?: string
  end_date_gte?: string
  end_date_lte?: string
  sort?: { field: (typeof LINE_ITEM_SORT_FIELDS)[number]; direction: 'asc' | 'desc' }[]
  limit: number
  offset: number
}

function range(gte?: string, lte?: string): Record<string, Date> | undefined {
  if (gte === undefined && lte === undefined) return undefined
  return { ...(gte !== undefined ? { $gte: new Date(gte) } : {}), ...(lte !== undefined ? { $lte: new Date(lte) } : {}) }
}

export async function searchLineItems(em: EntityManager, scope: Scope, f: SubscriptionLineItemFilter): Promise<[SubscriptionLineItem[], number]> {
  const where: Record<string, unknown> = { ...scope, status: f.status ?? 'published' }
  if (f.subscription_ids) where.subscription_id = { $in: f.subscription_ids }
  if (f.price_ids) where.price_id = { $in: f.price_ids }
  if (f.customer_id) where.customer_id = f.customer_id
  const starts = range(f.start_date_gte, f.start_date_lte)
  const ends = range(f.end_date_gte, f.end_date_lte)
  const and: Record<string, unknown>[] = []
  if (starts) and.push({ start_date: starts })
  if (ends) and.push({ end_date: ends })
  if (f.active_at !== undefined) {
    const at = new Date(f.active_at)
    and.push({ start_date: { $lte: at } }, { $or: [{ end_date: null }, { end_date: { $gt: at } }] })
  }
  if (and.length) where.$and = and
  // id last keeps pages stable when the sort keys tie.
  const orderBy = [...(f.sort ?? [{ field: 'created_at', direction: 'asc' }]).map((s) => ({ [s.field]: s.direction })), { id: 'asc' }]
  return em.findAndCount(SubscriptionLineItemSchema, where, { orderBy: orderBy as QueryOrderMap<SubscriptionLineItem>[], limit: f.limit, offset: f.offset })
}
