// GET /subscriptions/{id}/grants/upcoming (and per customer, over its subscriptions): the applications still to receive.
// Items are the persisted PENDING applications (due, waiting for the job) and the computed
// periods of its published grants that have no row yet: the due ones the job has not reached and
// the next UPCOMING_PER_GRANT per grant. Computed items carry id null and null created/updated
// fields, since nothing is stored for them; their application_status is PENDING. Ordered by scheduled_for, then idempotency key; paginated in memory (the list is short).
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Clock } from '../../platform/clock.js'
import type { Scope } from '../db/scope.js'
import type { Page } from '../http/schemas.js'
import { NotFoundError } from '../../platform/errors.js'
import { SubscriptionSchema, type Subscription } from '../subscriptions/subscription.entity.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { findInScope } from '../db/scoped-records.js'
import { CreditGrantApplicationSchema, type CreditGrantApplication } from './application.entity.js'
import { CreditGrantSchema } from './credit-grant.entity.js'
import { applicationKey, grantSchedule } from './grant-schedule.js'

export const UPCOMING_PER_GRANT = 3

/** An application as listed: a stored row, or a computed one whose stored-only fields are null. */
export type UpcomingApplication = Omit<CreditGrantApplication, 'id' | 'created_at' | 'updated_at'> & {
  id: string | null
  created_at: Date | null
  updated_at: Date | null
}

export async function pageUpcomingGrants(
  em: EntityManager, clock: Clock, scope: Scope, subscriptionId: string, page: Page,
): Promise<{ items: UpcomingApplication[]; total: number }> {
  const sub = await em.findOne(SubscriptionSchema, { id: subscriptionId, ...scope, status: { $ne: 'deleted' } })
  if (!sub) throw new NotFoundError('subscription', subscriptionId)
  return pageOf(await upcomingOf(em, scope, clock.now(), sub), page)
}

/** GET /customers/{id}/grants/upcoming: the same, over all the customer's subscriptions. */
export async function pageCustomerUpcomingGrants(
  em: EntityManager, clock: Clock, scope: Scope, customerId: string, page: Page,
): Promise<{ items: UpcomingApplication[]; total: number }> {
  await findInScope(em, CustomerSchema, scope, customerId, 'customer')
  const subs = await em.find(SubscriptionSchema, { ...scope, customer_id: customerId, status: { $ne: 'deleted' } })
  const now = clock.now()
  const items = (await Promise.all(subs.map((sub) => upcomingOf(em, scope, now, sub)))).flat()
  return pageOf(items, page)
}

function pageOf(items: UpcomingApplication[], page: Page) {
  items.sort((a, b) => a.scheduled_for.getTime() - b.scheduled_for.getTime() || (a.idempotency_key < b.idempotency_key ? -1 : 1))
  return { items: items.slice(page.offset, page.offset + page.limit), total: items.length }
}

async function upcomingOf(em: EntityManager, scope: Scope, now: Date, sub: Subscription): Promise<UpcomingApplication[]> {
  const stored = await em.find(CreditGrantApplicationSchema, { ...scope, subscription_id: sub.id }, { orderBy: { scheduled_for: 'asc', idempotency_key: 'asc' } })
  const items: UpcomingApplication[] = stored.filter((a) => a.application_status === 'PENDING')
  if (sub.subscription_status === 'ACTIVE' || sub.subscription_status === 'TRIALING') {
    const known = new Set(stored.map((a) => a.idempotency_key))
    const grants = await em.find(CreditGrantSchema, { ...scope, status: 'published', $or: [{ plan_id: sub.plan_id }, { subscription_id: sub.id }] })
    for (const grant of grants) {
      const schedule = grantSchedule(grant, sub, now, UPCOMING_PER_GRANT)
      for (const period of [...schedule.due, ...schedule.upcoming]) {
        const key = applicationKey(grant.id, sub.id, period.period_start)
        if (known.has(key)) continue
        items.push({
          id: null, ...scope, credit_grant_id: grant.id, subscription_id: sub.id, credits: grant.credits, ...period,
          applied_at: null, application_status: 'PENDING', failure_reason: null, retry_count: 0, idempotency_key: key,
          status: 'published', metadata: {}, created_at: null, updated_at: null, created_by: null, updated_by: null,
        })
      }
    }
  }
  return items
}
