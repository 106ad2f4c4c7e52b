// The usage-alert check (scheduled job `usage-alerts`, every USAGE_ALERTS_EVERY_MS). For every
// published metered feature whose alert_settings are enabled, every customer holding it through
// a live subscription has its usage in the current usage reset period compared with the
// thresholds. Each level reached fires once per (feature, customer, period): a state row and
// the system event `feature.usage_alert` are written in one transaction, and the state's unique
// key makes a re-check or a concurrent scheduler fire nothing twice. The system event goes out
// like every other: outbox -> relay -> Kafka system_events and webhook deliveries.
// Usage is read from the meter buckets, one statement per (feature, period) for all its
// customers in that period.
import type { EntityManager } from '@mikro-orm/postgresql'
import { newId } from '../../platform/ids.js'
import type { BillingContext } from '../context.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import type { Scope } from '../db/scope.js'
import { currentUsagePeriod, customerGrants, OPEN_END } from '../entitlements/index.js'
import { publishSystemEvent } from '../events/index.js'
import { FeatureSchema, type Feature } from '../features/feature.entity.js'
import { toReportingUnit } from '../features/index.js'
import { MeterSchema, type Meter } from '../meters/meter.entity.js'
import { meterValue, usageByCustomer, usageReader } from '../meters/index.js'
import { reachedLevels } from './levels.js'

export const USAGE_ALERT_EVENT = 'feature.usage_alert'

/** Customers with a live subscription whose plan, or an attached add-on, grants the feature enabled. */
async function holders(em: EntityManager, f: Feature): Promise<string[]> {
  const rows = (await em.getConnection().execute(
    `SELECT DISTINCT s.customer_id FROM subscriptions s
       JOIN entitlements e ON e.tenant_id = s.tenant_id AND e.environment_id = s.environment_id
        AND e.feature_id = ? AND e.status = 'published' AND e.is_enabled
      WHERE s.tenant_id = ? AND s.environment_id = ? AND s.subscription_status IN ('ACTIVE', 'TRIALING')
        AND ((e.entity_type = 'PLAN' AND e.entity_id = s.plan_id)
          OR (e.entity_type = 'ADDON' AND EXISTS (SELECT 1 FROM addon_associations a
                WHERE a.subscription_id = s.id AND a.addon_id = e.entity_id AND a.addon_status = 'active')))
      ORDER BY s.customer_id`,
    [f.id, f.tenant_id, f.environment_id],
  )) as { customer_id: string }[]
  return rows.map((r) => r.customer_id)
}

interface Due {
  customerId: string
  externalId: string
  start: Date
  end: Date | null
}

/** Fires what is due for one customer; returns the number of alerts fired. */
async function fire(ctx: BillingContext, f: Feature, due: Due, usage: string, at: Date): Promise<number> {
  const levels = reachedLevels(f.alert_settings, usage)
  if (levels.length === 0) return 0
  const scope: Scope = { tenant_id: f.tenant_id, environment_id: f.environment_id }
  return ctx.orm.em.fork().transactional(async (tx) => {
    let fired = 0
    for (const { level, threshold } of levels) {
      const id = newId('ualert')
      const eventId = newId('sysevt')
      const inserted = await tx.getConnection().execute(
        `INSERT INTO usage_alert_states (id, tenant_id, environment_id, feature_id, customer_id, period_start, period_end, level, threshold, usage, system_event_id, fired_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
        [id, f.tenant_id, f.environment_id, f.id, due.customerId, due.start, due.end, level, threshold, usage, eventId, at],
        'all', tx.getTransactionContext(),
      )
      if (inserted.length === 0) continue
      const event = publishSystemEvent(tx, scope, {
        event_name: USAGE_ALERT_EVENT, entity_type: 'usage_alert', entity_id: id,
        payload: {
          alert_id: id, level, threshold, usage, reported_usage: toReportingUnit(usage, f.reporting_unit),
          feature_id: f.id, feature_lookup_key: f.lookup_key, customer_id: due.customerId, external_customer_id: due.externalId,
          period_start: due.start.toISOString(), period_end: due.end?.toISOString() ?? null, fired_at: at.toISOString(),
        },
      })
      event.id = eventId
      fired++
    }
    await tx.flush()
    return fired
  })
}

async function checkFeature(ctx: BillingContext, f: Feature, meter: Meter, at: Date): Promise<number> {
  const em = ctx.orm.em.fork()
  const scope: Scope = { tenant_id: f.tenant_id, environment_id: f.environment_id }
  const ids = await holders(em, f)
  if (ids.length === 0) return 0
  const customers = new Map((await em.find(CustomerSchema, { ...scope, id: { $in: ids } })).map((c) => [c.id, c]))
  const byPeriod = new Map<string, Due[]>()
  for (const id of ids) {
    const period = currentUsagePeriod(await customerGrants(em, scope, id, [f.id], at), at)
    const customer = customers.get(id)
    if (!period || !customer) continue
    const key = `${period.start.toISOString()}|${period.end?.toISOString() ?? ''}`
    byPeriod.set(key, [...(byPeriod.get(key) ?? []), { customerId: id, externalId: customer.external_id, start: period.start, end: period.end }])
  }
  let fired = 0
  for (const group of byPeriod.values()) {
    const { start, end } = group[0]
    const rows = await usageByCustomer(usageReader(ctx), {
      tenantId: f.tenant_id, environmentId: f.environment_id, meterId: meter.id, aggregation: meter.aggregation.type,
      declaredGroupBy: meter.aggregation.group_by, start, end: end ?? OPEN_END,
    }, group.map((g) => g.externalId))
    const usage = new Map(rows.map((r) => [r.customer!, meterValue(meter, r.value, r.event_count)]))
    for (const due of group) {
      const u = usage.get(due.externalId)
      if (u !== undefined) fired += await fire(ctx, f, due, u, at)
    }
  }
  return fired
}

/** Returns the number of alerts fired. */
export async function checkUsageAlerts(ctx: BillingContext, opts: { tenantId?: string } = {}): Promise<number> {
  const at = ctx.clock.now()
  const em = ctx.orm.em.fork()
  const candidates = await em.find(FeatureSchema, {
    status: 'published', type: 'metered', alert_settings: { $ne: null }, ...(opts.tenantId ? { tenant_id: opts.tenantId } : {}),
  }, { orderBy: { id: 'asc' } })
  let fired = 0
  for (const f of candidates.filter((x) => x.alert_settings?.alert_enabled)) {
    const meter = await em.findOne(MeterSchema, { id: f.meter_id!, tenant_id: f.tenant_id, environment_id: f.environment_id })
    if (meter) fired += await checkFeature(ctx, f, meter, at)
  }
  return fired
}
