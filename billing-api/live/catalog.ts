// The live check's cache of Postgres records: per (tenant, environment) its features, meters and
// published entitlements; per customer the record, its ACTIVE/TRIALING subscriptions, their
// add-on associations and its wallets. Loaded on first use, dropped when a change may have
// touched them (invalidation.ts: Postgres NOTIFY from triggers, for every process, and the ORM's
// flushes, at once for the writing process). A load that an invalidation overtook is not kept
// (generation counters), so a cache never holds a record older than the last change it heard of.
import type { EntityManager } from '@mikro-orm/postgresql'
import { NotFoundError } from '../../platform/errors.js'
import { CustomerSchema, type Customer } from '../customers/customer.entity.js'
import type { Scope } from '../db/scope.js'
import { EntitlementSchema, type Entitlement } from '../entitlements/entitlement.entity.js'
import { FeatureSchema, type Feature } from '../features/feature.entity.js'
import { MeterSchema, type Meter } from '../meters/meter.entity.js'
import { AddonAssociationSchema, type AddonAssociation } from '../subscriptions/addon-association.entity.js'
import { SubscriptionSchema, type Subscription } from '../subscriptions/subscription.entity.js'
import { WalletSchema, type Wallet } from '../wallets/wallet.entity.js'
import { liveCacheEvents } from './metrics.js'
import { plainSelect } from '../db/plain-rows.js'

export interface ScopeCatalog {
  features: Map<string, Feature>
  featureByKey: Map<string, Feature>
  meters: Map<string, Meter>
  /** published entitlements per feature, in display order (display_order, created_at, id) */
  entitlementsByFeature: Map<string, Entitlement[]>
  /** meters of metered features that some enabled grant caps with a hard limit */
  cappedMeters: Set<string>
  /** features per meter */
  featuresByMeter: Map<string, Feature[]>
}

export interface CustomerHoldings {
  customer: Customer
  /** ACTIVE or TRIALING, by start_date then id; dates are checked at the instant of each check */
  subscriptions: Subscription[]
  addons: AddonAssociation[]
  wallets: Wallet[]
}

const scopeKey = (s: Scope) => `${s.tenant_id}\0${s.environment_id}`

export class LiveCatalog {
  private readonly scopes = new Map<string, Promise<ScopeCatalog>>()
  /** scope -> (customer id -> holdings); LRU order across scopes in `lru` */
  private readonly customers = new Map<string, Promise<CustomerHoldings>>()
  /** scope \0 external id -> customer id */
  private readonly byExternal = new Map<string, string>()
  /**
   * scope \0 external id of events whose customer has no record (events often arrive before the
   * customer is created): spend caps look each touched series up after every write. Any customer
   * change in the scope forgets the scope's entries (a new record may carry one of these ids).
   */
  private readonly missingExternal = new Map<string, Set<string>>()
  /** external lookups in flight: scope \0 external id \0 generations -> the query */
  private readonly lookingUp = new Map<string, Promise<Customer | null>>()
  private missingCount = 0
  /** bumped by every customer change of the scope (a lookup it overtook is not kept as missing) */
  private readonly scopeCustomerGen = new Map<string, number>()
  private readonly scopeGen = new Map<string, number>()
  private readonly customerGen = new Map<string, number>()
  private globalGen = 0
  /** false while no LISTEN connection is up: nothing is kept, every read goes to Postgres */
  caching = false
  /** told every customer change (spend caps re-evaluate a depleted wallet) */
  onCustomerChanged?: (scope: Scope, customerId: string | null) => void

  constructor(
    private readonly em: () => EntityManager,
    private readonly maxCustomers: number,
  ) {}

  // --- invalidation -------------------------------------------------------------------------

  /** Features, meters or entitlements of the scope changed. */
  dropScope(scope: Scope): void {
    const k = scopeKey(scope)
    this.scopeGen.set(k, (this.scopeGen.get(k) ?? 0) + 1)
    this.scopes.delete(k)
    liveCacheEvents.inc({ event: 'invalidated_scope' })
  }

  /** A customer's record, subscriptions, add-ons or wallets changed; no customer: all of the scope's. */
  dropCustomer(scope: Scope, customerId: string | null): void {
    const prefix = scopeKey(scope) + '\0'
    this.scopeCustomerGen.set(scopeKey(scope), (this.scopeCustomerGen.get(scopeKey(scope)) ?? 0) + 1)
    this.forgetMissing(scopeKey(scope))
    if (customerId === null) {
      this.scopeGen.set(scopeKey(scope), (this.scopeGen.get(scopeKey(scope)) ?? 0) + 1)
      for (const k of [...this.customers.keys()]) if (k.startsWith(prefix)) this.customers.delete(k)
      for (const k of [...this.byExternal.keys()]) if (k.startsWith(prefix)) this.byExternal.delete(k)
    } else {
      const k = prefix + customerId
      this.customerGen.set(k, (this.customerGen.get(k) ?? 0) + 1)
      this.customers.delete(k)
      // external id -> id entries of this customer may now point at a renamed record
      for (const [ek, id] of this.byExternal) if (id === customerId && ek.startsWith(prefix)) this.byExternal.delete(ek)
    }
    this.onCustomerChanged?.(scope, customerId)
    liveCacheEvents.inc({ event: 'invalidated_customer' })
  }

  /** Notifications may have been missed (the listening connection dropped): forget everything. */
  dropAll(): void {
    this.globalGen++
    this.scopes.clear()
    this.customers.clear()
    this.byExternal.clear()
    this.missingExternal.clear()
    this.missingCount = 0
  }

  private forgetMissing(scope: string): void {
    this.missingCount -= this.missingExternal.get(scope)?.size ?? 0
    this.missingExternal.delete(scope)
  }

  // --- reads --------------------------------------------------------------------------------

  scope(scope: Scope): Promise<ScopeCatalog> {
    const k = scopeKey(scope)
    const cached = this.scopes.get(k)
    if (cached) return cached
    liveCacheEvents.inc({ event: 'miss_scope' })
    if (!this.caching) return this.loadScope(scope)
    const gen = [this.globalGen, this.scopeGen.get(k) ?? 0]
    const loading = this.loadScope(scope)
    this.scopes.set(k, loading)
    loading.then(
      () => {
        if (gen[0] !== this.globalGen || gen[1] !== (this.scopeGen.get(k) ?? 0)) {
          if (this.scopes.get(k) === loading) this.scopes.delete(k)
        }
      },
      () => {
        if (this.scopes.get(k) === loading) this.scopes.delete(k)
      },
    )
    return loading
  }

  /** The customer by id or external id; NotFoundError when absent or deleted. */
  async holdings(scope: Scope, ref: { customer_id?: string; external_customer_id?: string }): Promise<CustomerHoldings> {
    const h = await this.findHoldings(scope, ref)
    if (!h) throw new NotFoundError('customer', ref.customer_id ?? ref.external_customer_id!)
    return h
  }

  /** As holdings(), null when there is no such customer (a known-missing external id costs no query). */
  async findHoldings(scope: Scope, ref: { customer_id?: string; external_customer_id?: string }): Promise<CustomerHoldings | null> {
    let id = ref.customer_id
    let found: Customer | undefined
    if (id === undefined) {
      const sk = scopeKey(scope)
      const ext = ref.external_customer_id!
      id = this.byExternal.get(`${sk}\0${ext}`)
      if (id === undefined) {
        if (this.missingExternal.get(sk)?.has(ext)) {
          liveCacheEvents.inc({ event: 'hit_missing_customer' })
          return null
        }
        const gen = [this.globalGen, this.scopeCustomerGen.get(sk) ?? 0]
        const c = await this.lookUpExternal(scope, `${sk}\0${ext}\0${gen.join('.')}`, ext)
        if (!c) {
          if (this.caching && gen[0] === this.globalGen && gen[1] === (this.scopeCustomerGen.get(sk) ?? 0)) this.rememberMissing(sk, ext)
          return null
        }
        id = c.id
        if (this.caching) this.byExternal.set(`${sk}\0${ext}`, id)
        // No customer change in the scope since the lookup began: its record serves the load
        // (one statement less per new customer; a cold check spends most of its time in these).
        if (gen[0] === this.globalGen && gen[1] === (this.scopeCustomerGen.get(sk) ?? 0)) found = c
      }
    }
    return this.customerHoldings(scope, id, found)
  }

  /**
   * One query per external id at a time: the writes that touch a new customer's series (one
   * per meter) ask together, and with thousands of customers that doubled a cold start's queries.
   * The key carries the cache generations, so a lookup begun before a customer change is not shared
   * with a caller that began after it.
   */
  private lookUpExternal(scope: Scope, key: string, ext: string): Promise<Customer | null> {
    const pending = this.lookingUp.get(key)
    if (pending) return pending
    const lookup = plainSelect(this.em(), CustomerSchema, `tenant_id = ? AND environment_id = ? AND external_id = ? AND status <> 'deleted' LIMIT 1`, [scope.tenant_id, scope.environment_id, ext])
      .then((rows) => rows[0] ?? null)
    this.lookingUp.set(key, lookup)
    const done = () => {
      if (this.lookingUp.get(key) === lookup) this.lookingUp.delete(key)
    }
    lookup.then(done, done)
    return lookup
  }

  private rememberMissing(scope: string, ext: string): void {
    let set = this.missingExternal.get(scope)
    if (!set) this.missingExternal.set(scope, (set = new Set()))
    if (set.has(ext)) return
    set.add(ext)
    this.missingCount++
    // Bounded like the customers: the oldest scope's entries go first.
    while (this.missingCount > this.maxCustomers) this.forgetMissing(this.missingExternal.keys().next().value!)
  }

  /** Holdings by customer id; null when absent or deleted. */
  async customerHoldings(scope: Scope, customerId: string, found?: Customer): Promise<CustomerHoldings | null> {
    const k = `${scopeKey(scope)}\0${customerId}`
    let entry = this.customers.get(k)
    if (entry) {
      // LRU: most recently used last
      this.customers.delete(k)
      this.customers.set(k, entry)
    } else if (!this.caching) {
      entry = this.loadCustomer(scope, customerId, found)
    } else {
      liveCacheEvents.inc({ event: 'miss_customer' })
      const gen = [this.globalGen, this.scopeGen.get(scopeKey(scope)) ?? 0, this.customerGen.get(k) ?? 0]
      entry = this.loadCustomer(scope, customerId, found)
      const loading = entry
      this.customers.set(k, loading)
      const forget = () => {
        if (this.customers.get(k) === loading) this.customers.delete(k)
      }
      loading.then(() => {
        if (gen[0] !== this.globalGen || gen[1] !== (this.scopeGen.get(scopeKey(scope)) ?? 0) || gen[2] !== (this.customerGen.get(k) ?? 0)) forget()
      }, forget)
      while (this.customers.size > this.maxCustomers) this.customers.delete(this.customers.keys().next().value!)
    }
    try {
      return await entry
    } catch (err) {
      if (err instanceof NotFoundError) return null
      throw err
    }
  }

  get size(): { customers: number; scopes: number } {
    return { customers: this.customers.size, scopes: this.scopes.size }
  }

  private async loadScope(scope: Scope): Promise<ScopeCatalog> {
    const em = this.em()
    const [features, meters, entitlements] = await Promise.all([
      em.find(FeatureSchema, { ...scope, status: { $ne: 'deleted' } }),
      em.fork().find(MeterSchema, { ...scope }),
      em.fork().find(EntitlementSchema, { ...scope, status: 'published' }, { orderBy: { display_order: 'asc', created_at: 'asc', id: 'asc' } }),
    ])
    const entitlementsByFeature = new Map<string, Entitlement[]>()
    for (const e of entitlements) entitlementsByFeature.set(e.feature_id, [...(entitlementsByFeature.get(e.feature_id) ?? []), e])
    const featuresById = new Map(features.map((f) => [f.id, f]))
    const cappedMeters = new Set<string>()
    const featuresByMeter = new Map<string, Feature[]>()
    for (const f of features) {
      if (!f.meter_id) continue
      featuresByMeter.set(f.meter_id, [...(featuresByMeter.get(f.meter_id) ?? []), f])
      if ((entitlementsByFeature.get(f.id) ?? []).some((e) => e.is_enabled && e.usage_limit !== null && !e.is_soft_limit)) cappedMeters.add(f.meter_id)
    }
    return {
      features: featuresById,
      featureByKey: new Map(features.map((f) => [f.lookup_key, f])),
      meters: new Map(meters.map((m) => [m.id, m])),
      entitlementsByFeature,
      cappedMeters,
      featuresByMeter,
    }
  }

  /**
   * Plain rows (db/plain-rows.ts `plainSelect`), all four statements at once: the add-ons by
   * their live subscriptions in a subquery. `found`: the record, just read by external id with
   * no customer change of the scope since.
   */
  private async loadCustomer(scope: Scope, customerId: string, found?: Customer): Promise<CustomerHoldings> {
    const em = this.em()
    const own = [scope.tenant_id, scope.environment_id, customerId]
    const live = `subscription_status IN ('ACTIVE', 'TRIALING')`
    const [customers, subscriptions, wallets, addons] = await Promise.all([
      found ? [found] : plainSelect(em, CustomerSchema, `tenant_id = ? AND environment_id = ? AND id = ? AND status <> 'deleted'`, own),
      plainSelect(em, SubscriptionSchema, `tenant_id = ? AND environment_id = ? AND customer_id = ? AND ${live}`, own, 'start_date ASC, id ASC'),
      plainSelect(em, WalletSchema, `tenant_id = ? AND environment_id = ? AND customer_id = ? AND status = 'published'`, own),
      plainSelect(em, AddonAssociationSchema, `tenant_id = ? AND environment_id = ? AND addon_status = 'active' AND subscription_id IN (
        SELECT id FROM subscriptions WHERE tenant_id = ? AND environment_id = ? AND customer_id = ? AND ${live})`, [scope.tenant_id, scope.environment_id, ...own]),
    ])
    if (!customers[0]) throw new NotFoundError('customer', customerId)
    return { customer: customers[0], subscriptions, addons, wallets }
  }
}
