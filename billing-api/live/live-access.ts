// One process's live access: the catalog cache, the usage counters, their invalidation and
// write feeds, and the spend caps. Started by the composition root where billing-api runs;
// the routes find it through liveAccess(ctx).
import type { Redis } from 'ioredis'
import { ServiceUnavailableError } from '../../platform/errors.js'
import type { BillingContext } from '../context.js'
import { clickhouseUsage } from '../meters/index.js'
import { LiveCatalog } from './catalog.js'
import { LiveCounters } from './counters.js'
import { startInvalidation, type Invalidation } from './invalidation.js'
import { MeterActivations } from './meter-activations.js'
import { liveUsageStaleness } from './metrics.js'
import { SpendCaps } from './spend-caps.js'
import { startWriteSubscriber, type WriteSubscriber } from './write-bus.js'

export interface LiveAccess {
  catalog: LiveCatalog
  counters: LiveCounters
  caps: SpendCaps
  /** resolves once the LISTEN connection and the write subscription are up */
  ready: Promise<void>
  stop(): Promise<void>
}

const instances = new WeakMap<BillingContext, LiveAccess>()

export function liveAccess(ctx: BillingContext): LiveAccess {
  const live = instances.get(ctx)
  if (!live) throw new ServiceUnavailableError('live access is not running in this process')
  return live
}

export function startLiveAccess(
  ctx: BillingContext, redis: { subscriber: Redis; reader: Redis }, log: (msg: string, err?: unknown) => void, warn: (msg: string, err?: unknown) => void = log,
): LiveAccess {
  const { config } = ctx
  const catalog = new LiveCatalog(() => ctx.orm.em.fork(), config.live.maxCustomers)
  const activations = new MeterActivations(ctx.ch, ctx.orm)
  const counters = new LiveCounters(clickhouseUsage(ctx.ch), config.live.maxCounters, (meterId) => activations.isActive(meterId), config.live.scopeLoad)
  const invalidation: Invalidation = startInvalidation(ctx.orm, catalog, () => undefined, log, warn)
  const subscriber: WriteSubscriber = startWriteSubscriber(redis.subscriber, redis.reader, config.redisPrefix, counters, log)
  const caps = new SpendCaps(ctx, catalog, counters, config.live.spendCapConcurrency, log)
  counters.onApplied = (series) => caps.touched(series)
  const gauge = setInterval(() => {
    if (counters.asOf !== null) liveUsageStaleness.set((Date.now() - counters.asOf) / 1000)
  }, 1000)
  gauge.unref()
  const live: LiveAccess = {
    catalog, counters, caps,
    ready: Promise.all([invalidation.ready, subscriber.ready]).then(() => undefined),
    async stop() {
      clearInterval(gauge)
      instances.delete(ctx)
      caps.stop()
      await Promise.all([invalidation.stop(), subscriber.stop()])
    },
  }
  instances.set(ctx, live)
  return live
}
