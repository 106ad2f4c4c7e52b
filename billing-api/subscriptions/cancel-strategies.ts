// Multi-cadence cancellation strategies (spec: "multi-cadence subscriptions also allow
// minimum-period-end and maximum-period-end strategies"). cancellation_type
// minimum_period_end / maximum_period_end (the hyphenated spellings are accepted and stored
// with underscores) is valid only when the subscription's current line items bill on at
// least two different cadences (billing_period and count of their recurring prices). The
// subscription then ends at the earliest / latest current period end among those cadences
// (cadence.ts), and is scheduled like scheduled_date: it stays ACTIVE, the billing schedule
// terminates it at cancel_at and publishes subscription.cancelled then.
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import { publishSystemEvent } from '../events/index.js'
import { PriceSchema, type Price } from '../plans/price.entity.js'
import { distinctCadences, lineItemPeriod } from '../periods/cadence.js'
import { eventPayload } from './service.js'
import { SubscriptionLineItemSchema, type CancellationType, type Subscription } from './subscription.entity.js'

export const CADENCE_STRATEGIES = ['minimum_period_end', 'maximum_period_end'] as const
export type CadenceStrategy = (typeof CADENCE_STRATEGIES)[number]

/** Spellings accepted on the wire besides CANCELLATION_TYPES. */
export const CANCELLATION_TYPE_ALIASES: Record<string, CancellationType> = {
  'minimum-period-end': 'minimum_period_end',
  'maximum-period-end': 'maximum_period_end',
}

export const normalizeCancellationType = (t: string): CancellationType => CANCELLATION_TYPE_ALIASES[t] ?? (t as CancellationType)

export const isCadenceStrategy = (t: string): t is CadenceStrategy => (CADENCE_STRATEGIES as readonly string[]).includes(t)

/** Pure: the end a strategy picks among the current periods of the prices' cadences at `now`. */
export function strategyEnd(
  sub: Parameters<typeof lineItemPeriod>[0], prices: Pick<Price, 'billing_period' | 'billing_period_count'>[], now: Date, strategy: CadenceStrategy,
): Date {
  const cadences = distinctCadences(prices)
  if (cadences.length < 2) {
    throw new ValidationError(
      `cancellation_type ${strategy} needs a multi-cadence subscription (line items with different billing periods); use end_of_period`, 'cancellation_type',
    )
  }
  const ends = cadences.map((c) => lineItemPeriod(sub, c, now).end.getTime())
  return new Date(strategy === 'minimum_period_end' ? Math.min(...ends) : Math.max(...ends))
}

/** Schedules the termination; the caller holds the row lock and flushes. */
export async function scheduleStrategyCancel(tx: EntityManager, scope: Scope, sub: Subscription, strategy: CadenceStrategy, cancelAt: string | undefined, now: Date): Promise<void> {
  if (cancelAt !== undefined) throw new ValidationError(`cancel_at is not accepted with cancellation_type ${strategy}`, 'cancel_at')
  const lineItems = await tx.find(SubscriptionLineItemSchema, { subscription_id: sub.id, ...scope, status: 'published', $or: [{ end_date: null }, { end_date: { $gt: now } }] })
  const prices = await tx.find(PriceSchema, { id: { $in: lineItems.map((l) => l.price_id) }, ...scope })
  const end = strategyEnd(sub, prices, now, strategy)
  sub.cancellation_type = strategy
  sub.cancel_at = end
  sub.cancel_at_period_end = end.getTime() === sub.current_period_end.getTime()
  publishSystemEvent(tx, scope, { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
}
