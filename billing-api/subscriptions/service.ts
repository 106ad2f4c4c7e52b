// Subscription use cases (foundation scope: create, read). The lifecycle (trials, cancel,
// modify, hierarchies) builds on this.
import type { EntityManager } from '@mikro-orm/postgresql'
import { NotFoundError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Clock } from '../../platform/clock.js'
import type { Scope } from '../auth/authenticate.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { getPlan } from '../plans/service.js'
import type { BillingPeriod, Price } from '../plans/price.entity.js'
import { calendarAnchor, nextBoundary } from './periods.js'
import { SubscriptionLineItemSchema, SubscriptionSchema, type Subscription, type SubscriptionLineItem } from './subscription.entity.js'

export interface CreateSubscriptionInput {
  customer_id?: string
  external_customer_id?: string
  plan_id: string
  currency: string
  billing_period?: Exclude<BillingPeriod, 'ONETIME'>
  billing_period_count?: number
  billing_cycle?: 'anniversary' | 'calendar'
  start_date?: string
  metadata?: Record<string, string>
}

/** Plan prices a subscription takes: same currency, same cadence, plus one-time charges. */
export function selectPrices(prices: Price[], currency: string, period: BillingPeriod, count: number): Price[] {
  return prices.filter(
    (p) => p.currency === currency && (p.billing_period === 'ONETIME' || (p.billing_period === period && p.billing_period_count === count)),
  )
}

export async function createSubscription(em: EntityManager, scope: Scope, userId: string, clock: Clock, input: CreateSubscriptionInput) {
  return em.transactional(async (tx) => {
    const customer = input.customer_id
      ? await tx.findOne(CustomerSchema, { id: input.customer_id, ...scope, status: 'published' })
      : input.external_customer_id
        ? await tx.findOne(CustomerSchema, { external_id: input.external_customer_id, ...scope, status: 'published' })
        : null
    if (!input.customer_id && !input.external_customer_id) throw new ValidationError('customer_id or external_customer_id is required', 'customer_id')
    if (!customer) throw new NotFoundError('customer', input.customer_id ?? input.external_customer_id)
    const { plan, prices } = await getPlan(tx, scope, input.plan_id).catch((err) => {
      if (err instanceof NotFoundError) throw new ValidationError(`plan ${input.plan_id} not found`, 'plan_id')
      throw err
    })
    if (plan.status !== 'published') throw new ValidationError(`plan ${plan.id} is ${plan.status} and takes no new subscriptions`, 'plan_id')
    const currency = input.currency.toUpperCase()
    const period = input.billing_period ?? 'MONTHLY'
    const count = input.billing_period_count ?? 1
    const chosen = selectPrices(prices, currency, period, count)
    if (chosen.length === 0) {
      throw new ValidationError(`plan ${plan.id} has no ${currency} prices billed every ${count} ${period}`, 'currency')
    }
    const start = input.start_date ? new Date(input.start_date) : clock.now()
    const cycle = input.billing_cycle ?? 'anniversary'
    const anchor = cycle === 'calendar' ? calendarAnchor(start, period) : start
    const sub = tx.create(SubscriptionSchema, {
      id: newId('subs'), ...scope, customer_id: customer.id, plan_id: plan.id, currency, subscription_status: 'ACTIVE',
      billing_period: period, billing_period_count: count, billing_cycle: cycle, billing_anchor: anchor, start_date: start,
      end_date: null, current_period_start: start, current_period_end: nextBoundary(anchor, period, count, start),
      cancel_at: null, cancelled_at: null, cancel_at_period_end: false, status: 'published', metadata: input.metadata ?? {},
      created_by: userId, updated_by: userId,
    } as any)
    const lineItems = chosen.map((price) =>
      tx.create(SubscriptionLineItemSchema, {
        id: newId('subs_line'), ...scope, subscription_id: sub.id, customer_id: customer.id, price_id: price.id,
        meter_id: price.meter_id, currency, display_name: price.display_name ?? plan.name, quantity: '1', start_date: start,
        end_date: null, status: 'published', metadata: {}, created_by: userId, updated_by: userId,
      } as any),
    )
    return { subscription: sub, lineItems }
  })
}

export async function getSubscription(em: EntityManager, scope: Scope, id: string): Promise<{ subscription: Subscription; lineItems: SubscriptionLineItem[] }> {
  const subscription = await em.findOne(SubscriptionSchema, { id, ...scope, status: { $ne: 'deleted' } })
  if (!subscription) throw new NotFoundError('subscription', id)
  const lineItems = await em.find(SubscriptionLineItemSchema, { subscription_id: id, ...scope, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
  return { subscription, lineItems }
}
