// Spend caps: after every committed write this process applied, the (meter, customer) series it
// touched are evaluated, a few customers at a time:
// - a metered feature whose enabled grants have a hard limit (no soft grant) and whose usage in
//   the current reset period reached it fires `feature.usage_limit_reached` (level `hard_limit`);
// - a PREPAID wallet whose live balance (balance.ts) is at or below zero fires
//   `wallet.balance_depleted` (level `depleted`, period: the subscription's billing period),
//   and the customer's metered features answer has_access: false until the wallet changes.
// Exactly once per (subject, customer, period, level) across processes: the spend_cap_events
// row (unique) and its system event commit in one transaction, so of two API processes that
// both see the crossing only one inserts. Webhooks follow the usual outbox -> relay path.
// How far usage can overshoot a cap: docs/architecture.md, "Live access".
import { newId } from '../../platform/ids.js'
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import { allowance, combineGrants, grantsOf } from '../entitlements/index.js'
import { publishSystemEvent } from '../events/index.js'
import type { Feature } from '../features/feature.entity.js'
import { meterValue } from '../meters/index.js'
import { D } from '../pricing/index.js'
import type { CustomerHoldings, LiveCatalog, ScopeCatalog } from './catalog.js'
import { undatedWindow } from './cap-terms.js'
import type { LiveAggregation, LiveCounters } from './counters.js'
import { liveBalances } from './balance.js'
import { spendCapsFired } from './metrics.js'
import { liveUsagePeriod } from './usage-periods.js'

export const USAGE_LIMIT_REACHED = 'feature.usage_limit_reached'
export const BALANCE_DEPLETED = 'wallet.balance_depleted'
/** a customer's wallets are evaluated at most this often (each evaluation prices its open periods) */
const WALLET_EVERY_MS = 250

interface Cap {
  kind: 'feature_usage' | 'wallet_balance'
  subjectId: string
  customerId: string
  periodStart: Date
  periodEnd: Date | null
  level: string
  threshold: string
  observed: string
  eventName: string
  payload: Record<string, unknown>
}

interface CapTerms {
  combined: ReturnType<typeof combineGrants>
  limit: string
  meter: NonNullable<ReturnType<ScopeCatalog['meters']['get']>>
  period: NonNullable<ReturnType<typeof liveUsagePeriod>>
  key: string
}

/** how long evaluations run back to back before pending I/O goes first */
const SLICE_MS = 5

/** cap terms computed under `cat`, valid at instants in [from, until) */
interface KnownTerms {
  cat: ScopeCatalog
  from: number
  until: number
  cap: CapTerms | null
}

export class SpendCaps {
  private readonly queue = new Map<string, { scope: Scope; meterId: string; externalId: string }>()
  private running = 0
  /** when the evaluations running back to back began (see pump) */
  private sliceStart = 0
  private stopped = false
  /** caps this process fired or saw fired (key of the unique row) */
  private readonly fired = new Set<string>()
  /** scope \0 customer id -> depleted */
  private readonly depleted = new Set<string>()
  private readonly walletEvaluated = new Map<string, number>()
  private readonly walletLater = new Map<string, NodeJS.Timeout>()
  /** per holdings object (replaced when the customer changes): feature id -> its cap terms while valid */
  private readonly terms = new WeakMap<CustomerHoldings, Map<string, KnownTerms>>()

  constructor(
    private readonly ctx: BillingContext,
    private readonly catalog: LiveCatalog,
    private readonly counters: LiveCounters,
    private readonly concurrency: number,
    private readonly log: (msg: string, err?: unknown) => void,
  ) {
    catalog.onCustomerChanged = (scope, customerId) => {
      // A wallet credit may lift the cap: re-evaluated at the next write.
      if (customerId === null) {
        for (const k of [...this.depleted]) if (k.startsWith(`${scope.tenant_id}\0${scope.environment_id}\0`)) this.depleted.delete(k)
      } else this.depleted.delete(`${scope.tenant_id}\0${scope.environment_id}\0${customerId}`)
    }
  }

  isDepleted(scope: Scope, customerId: string): boolean {
    return this.depleted.has(`${scope.tenant_id}\0${scope.environment_id}\0${customerId}`)
  }

  /** The series a committed write touched: tenant \0 environment \0 meter \0 customer. */
  touched(series: Set<string>): void {
    if (this.stopped) return
    for (const s of series) {
      if (this.queue.has(s)) continue
      const [tenant_id, environment_id, meterId, externalId] = s.split('\0')
      this.queue.set(s, { scope: { tenant_id, environment_id }, meterId, externalId })
    }
    this.pump()
  }

  stop(): void {
    this.stopped = true
    this.queue.clear()
    for (const t of this.walletLater.values()) clearTimeout(t)
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.size > 0) {
      const [k, item] = this.queue.entries().next().value!
      this.queue.delete(k)
      this.running++
      this.evaluate(item.scope, item.meterId, item.externalId)
        .catch((err) => this.log('spend caps: evaluation failed', err))
        .finally(() => {
          this.running--
          // With everything cached an evaluation never waits, and a write that touched thousands
          // of series would hold the loop (and the checks) until all were done: after a slice of
          // SLICE_MS the next ones start after pending I/O.
          if (performance.now() - this.sliceStart < SLICE_MS) return this.pump()
          setImmediate(() => {
            this.sliceStart = performance.now()
            this.pump()
          })
        })
    }
  }

  private async evaluate(scope: Scope, meterId: string, externalId: string): Promise<void> {
    const cat = await this.catalog.scope(scope)
    const capped = cat.cappedMeters.has(meterId)
    // Customers without a wallet and meters without a hard limit cost one map lookup each.
    const h = await this.catalog.findHoldings(scope, { external_customer_id: externalId })
    if (!h) return // events of a customer that has no record
    const at = this.ctx.clock.now()
    if (capped) {
      for (const f of cat.featuresByMeter.get(meterId) ?? []) await this.evaluateFeature(scope, h, f, at)
    }
    if (h.wallets.some((w) => w.wallet_type === 'PREPAID')) this.scheduleWallets(scope, h.customer.id, externalId)
  }

  /** A feature's hard-cap terms for one customer at `at` (cap-terms.ts); null: no hard cap. */
  private async capTerms(scope: Scope, h: CustomerHoldings, f: Feature, at: Date): Promise<CapTerms | null> {
    const cat = await this.catalog.scope(scope)
    const t = at.getTime()
    let byFeature = this.terms.get(h)
    const known = byFeature?.get(f.id)
    if (known && known.cat === cat && known.from <= t && t < known.until) return known.cap
    const entitlements = cat.entitlementsByFeature.get(f.id) ?? []
    const grants = grantsOf(h.subscriptions, h.addons, entitlements, at)
    const combined = combineGrants(grants.map((g) => g.entitlement))
    const meter = f.meter_id ? cat.meters.get(f.meter_id) : undefined
    let cap: CapTerms | null = null
    if (meter && combined.is_enabled && combined.usage_limit !== null && !combined.is_soft_limit) {
      const period = liveUsagePeriod(grants, at)
      if (period) cap = { combined, limit: combined.usage_limit, meter, period, key: this.key(scope, 'feature_usage', f.id, h.customer.id, period.start, 'hard_limit') }
    }
    const window = undatedWindow([...h.subscriptions, ...h.addons, ...entitlements], t)
    const from = Math.max(window.from, cap ? cap.period.start.getTime() : -Infinity)
    const until = Math.min(window.until, cap?.period.end ? cap.period.end.getTime() : Infinity)
    if (!byFeature) this.terms.set(h, (byFeature = new Map<string, KnownTerms>()))
    byFeature.set(f.id, { cat, from, until, cap })
    return cap
  }

  private async evaluateFeature(scope: Scope, h: CustomerHoldings, f: Feature, at: Date): Promise<void> {
    const terms = await this.capTerms(scope, h, f, at)
    if (!terms) return
    const { combined, limit, meter, period, key } = terms
    if (this.fired.has(key)) return
    const v = await this.counters.get({
      tenantId: scope.tenant_id, environmentId: scope.environment_id, meterId: meter.id, aggregation: meter.aggregation.type as LiveAggregation,
      externalCustomerId: h.customer.external_id, start: period.start, end: period.end,
    })
    const usage = meterValue(meter, v.value, v.event_count)
    if (allowance(combined, usage).has_access) return
    await this.fire(scope, key, {
      kind: 'feature_usage', subjectId: f.id, customerId: h.customer.id, periodStart: period.start, periodEnd: period.end,
      level: 'hard_limit', threshold: limit, observed: usage, eventName: USAGE_LIMIT_REACHED,
      payload: {
        feature_id: f.id, feature_lookup_key: f.lookup_key, customer_id: h.customer.id, external_customer_id: h.customer.external_id,
        level: 'hard_limit', usage_limit: limit, usage, period_start: period.start.toISOString(),
        period_end: period.end?.toISOString() ?? null, usage_as_of: v.asOf !== null ? new Date(v.asOf).toISOString() : null,
      },
    })
  }

  private scheduleWallets(scope: Scope, customerId: string, externalId: string): void {
    const k = `${scope.tenant_id}\0${scope.environment_id}\0${customerId}`
    if (this.walletLater.has(k)) return
    const wait = (this.walletEvaluated.get(k) ?? 0) + WALLET_EVERY_MS - Date.now()
    const run = () => {
      this.walletLater.delete(k)
      if (this.stopped) return
      this.walletEvaluated.set(k, Date.now())
      this.evaluateWallets(scope, externalId).catch((err) => this.log('spend caps: wallet evaluation failed', err))
    }
    if (wait <= 0) run()
    else this.walletLater.set(k, setTimeout(run, wait))
  }

  private async evaluateWallets(scope: Scope, externalId: string): Promise<void> {
    const h = await this.catalog.holdings(scope, { external_customer_id: externalId })
    const at = this.ctx.clock.now()
    const { wallets, asOf } = await liveBalances(this.ctx, this.counters, this.ctx.orm.em.fork(), scope, h, at)
    const k = `${scope.tenant_id}\0${scope.environment_id}\0${h.customer.id}`
    let depleted = false
    for (const w of wallets) {
      if (w.wallet_type !== 'PREPAID' || D(w.live_balance).gt(0)) continue
      depleted = true
      const sub = h.subscriptions.find((s) => s.currency === w.currency) ?? h.subscriptions[0]
      if (!sub) continue
      const key = this.key(scope, 'wallet_balance', w.wallet_id, h.customer.id, sub.current_period_start, 'depleted')
      if (this.fired.has(key)) continue
      await this.fire(scope, key, {
        kind: 'wallet_balance', subjectId: w.wallet_id, customerId: h.customer.id, periodStart: sub.current_period_start,
        periodEnd: sub.current_period_end, level: 'depleted', threshold: '0', observed: w.live_balance, eventName: BALANCE_DEPLETED,
        payload: {
          wallet_id: w.wallet_id, customer_id: h.customer.id, external_customer_id: h.customer.external_id, currency: w.currency,
          level: 'depleted', balance: w.balance, unbilled_usage: w.unbilled_usage, live_balance: w.live_balance,
          period_start: sub.current_period_start.toISOString(), period_end: sub.current_period_end.toISOString(),
          usage_as_of: asOf !== null ? new Date(asOf).toISOString() : null,
        },
      })
    }
    if (depleted) this.depleted.add(k)
    else this.depleted.delete(k)
  }

  private key(scope: Scope, kind: Cap['kind'], subjectId: string, customerId: string, periodStart: Date, level: string): string {
    return [scope.tenant_id, scope.environment_id, kind, subjectId, customerId, periodStart.getTime(), level].join('\0')
  }

  private async fire(scope: Scope, key: string, cap: Cap): Promise<void> {
    const at = this.ctx.clock.now()
    const inserted = await this.ctx.orm.em.fork().transactional(async (tx) => {
      const id = newId('spcap')
      const eventId = newId('sysevt')
      const rows = await tx.getConnection().execute(
        `INSERT INTO spend_cap_events (id, tenant_id, environment_id, kind, subject_id, customer_id, period_start, period_end, level, threshold, observed, system_event_id, fired_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
        [id, scope.tenant_id, scope.environment_id, cap.kind, cap.subjectId, cap.customerId, cap.periodStart, cap.periodEnd, cap.level, cap.threshold, cap.observed, eventId, at],
        'all', tx.getTransactionContext(),
      )
      if (rows.length === 0) return false
      const event = publishSystemEvent(tx, scope, {
        event_name: cap.eventName, entity_type: 'spend_cap', entity_id: id,
        payload: { spend_cap_id: id, ...cap.payload, fired_at: at.toISOString() },
      })
      event.id = eventId
      await tx.flush()
      return true
    })
    this.fired.add(key)
    if (inserted) spendCapsFired.inc({ kind: cap.kind })
  }
}
