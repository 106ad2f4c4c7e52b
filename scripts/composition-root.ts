// The composition root: the one place where the services are wired together (configuration,
// connections, queues, the context's ports such as the subscription lifecycle's invoicing).
// All four services share one process in the all-in-one topology (scripts/all-in-one.ts); in
// the processes topology and in split deployments scripts/run-service.ts starts one service,
// reaching ClickHouse over HTTP.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type { MikroORM } from '@mikro-orm/postgresql'
import type { Aggregator, AggregatorHooks } from '../aggregator/consumer.js'
import { ShardFence } from '../aggregator/shard-fence.js'
import type { CommittedWriteListener } from '../schemas/committed-write.js'
import { registerBillingApi } from '../billing-api/app.js'
import { registerConsole } from '../console/serve.js'
import { registerOpenApi } from '../billing-api/openapi/swagger.js'
import { createAuthenticator, RequestRateLimiter } from '../billing-api/auth/index.js'
import type { BillingContext } from '../billing-api/context.js'
import { migratePostgres, openOrm } from '../billing-api/database.js'
import { postgresMeterSource } from '../billing-api/meters/index.js'
import { startOutboxRelay } from '../billing-api/outbox/relay.js'
import { startLiveAccess, startWritePublisher, type LiveAccess } from '../billing-api/live/index.js'
import { createWebhookQueue, startWebhookWorker } from '../billing-api/webhooks/index.js'
import { registerAggregatorView, topologyAggregators } from '../billing-api/admin/topology-aggregators.js'
import { topUpInvoicing } from '../billing-api/invoices/index.js'
import { subscriptionInvoicing, createInvoiceComputeQueue, startInvoiceComputeWorker, kafkaIngestWatermark } from '../billing-api/billing/index.js'
import { createIntegrationQueue, startIntegrationWorker } from '../billing-api/integrations/index.js'
import { createPaymentRetryQueue, paymentFailureReporting, startPaymentRetryWorker } from '../billing-api/payments/index.js'
import { createEnvironmentCloneQueue, startEnvironmentCloneWorker } from '../billing-api/environment-clone/index.js'
import { ClickHouse, openTransport } from '../clickhouse/client.js'
import { migrateClickHouse } from '../clickhouse/migrate.js'
import { applyRetention } from '../clickhouse/retention.js'
import { registerIngest } from '../ingest/app.js'
import { systemClock, type Clock } from '../platform/clock.js'
import type { Config } from '../platform/config.js'
import type { IngestSpool, SpoolHandle } from '../ingest/spool/ingest-spool.js'
import { openIngest } from '../ingest/start.js'
import { registerIngestForwarding, startIngestThread } from '../ingest/thread/index.js'
import { registerIngestHttpForwarding } from '../ingest/http-forwarding.js'
import { createHttpServer } from '../platform/http.js'
import { registerProcessStatus } from '../platform/process-status.js'
import { LagGate } from '../platform/lag-gate.js'
import { AbuseLimiter } from '../platform/abuse-limit.js'
import { PostgresWatchdog } from '../platform/postgres-watchdog.js'
import { configureMetricLabels } from '../platform/metric-labels.js'
import { addThreadMetrics } from '../platform/metrics.js'
import { reportClickHouseMemory } from '../clickhouse/memory-metrics.js'
import { createKafka, createProducer } from '../platform/kafka.js'
import { createQueueRedis, createRedis } from '../platform/redis.js'
import { startScheduler, type Scheduler } from '../scheduler/scheduler.js'
import { rotateSecrets } from './rotate-secrets.js'
import { startAggregatorThread } from './aggregator-thread.js'
import { consumerSet } from './aggregator-consumers.js'

export type ServiceName = 'ingest' | 'aggregator' | 'billing-api' | 'scheduler'
export const ALL_SERVICES: ServiceName[] = ['ingest', 'aggregator', 'billing-api', 'scheduler']

export interface PlatformOptions {
  services?: ServiceName[]
  clock?: Clock
  /** run migrations first: both stores, or only ClickHouse (tests migrate Postgres once up front) */
  migrate?: boolean | 'clickhouse'
  /** false: the scheduler processes on-demand triggers only */
  schedule?: boolean
  /** false: the scheduler does not relay the system-events outbox (tests relay per tenant) */
  relay?: boolean
  aggregatorHooks?: AggregatorHooks
  /** told every committed aggregator write (besides the live counters' publisher) */
  onCommittedWrite?: CommittedWriteListener
  listen?: boolean
  /** called with the HTTP server before any route is registered (tests add hooks) */
  onHttpServer?: (app: FastifyInstance) => void
}

export interface Platform {
  app: FastifyInstance
  url: string
  ctx: BillingContext
  aggregator?: Aggregator
  scheduler?: Scheduler
  /** ingest's spool on this thread (tests read it); with INGEST_THREAD=worker it is on the ingest thread */
  spool?: IngestSpool
  /** the spool wherever it runs */
  spoolHandle?: SpoolHandle
  stop(): Promise<void>
}

export async function startPlatform(config: Config, opts: PlatformOptions = {}): Promise<Platform> {
  const w: Wiring = { config, opts, services: new Set(opts.services ?? ALL_SERVICES), clock: opts.clock ?? systemClock, closers: [] }
  configureMetricLabels(config.metricLabels)
  // The HTTP server closes first (stop taking requests), then everything else in reverse order.
  let closeHttp: (() => Promise<unknown>) | undefined
  const stopAll = async () => {
    await closeHttp?.().catch((err) => console.error('shutdown step failed', err))
    for (const close of w.closers.reverse()) await close().catch((err) => console.error('shutdown step failed', err))
  }
  try {
    const stores = await openStores(w)
    const ctx: BillingContext = { config, orm: stores.orm, ch: stores.ch, clock: w.clock, topUpInvoicing, subscriptionInvoicing, paymentFailures: paymentFailureReporting }
    const redis = openQueues(w, ctx)
    const serviceName = w.services.size === ALL_SERVICES.length ? 'all-in-one' : [...w.services].join('+')
    const app = createHttpServer({ service: serviceName, logLevel: config.logLevel, ...config.http })
    opts.onHttpServer?.(app)
    const limiter = openRateLimits(w, ctx)
    const live = startLive(w, ctx, redis, app)
    const auth = createAuthenticator(stores.orm, w.clock, config.apiKeyCacheTtlMs, config.apiKeyHashing, limiter, config.authJwtSecret, ctx.abuse)
    if (w.services.has('billing-api')) await registerBillingRoutes(app, ctx, auth, serviceName)
    const gate = lagGate(w)
    const { spool, spoolHandle } = await startIngest(w, app, auth, gate)
    await registerTopologyRoutes(w, app, ctx, auth)
    // Every route is registered: serve now, while the background parts below start (a restart
    // after a crash answers sooner; the spool takes events before the aggregator is back).
    closeHttp = () => app.close()
    await app.ready()
    const url = opts.listen !== false ? await app.listen({ host: config.host, port: config.port }) : ''
    const aggregator = w.services.has('aggregator') ? await startAggregation(w, stores, ctx, app, { live, gate, spoolHandle }) : undefined
    // On shutdown, after the HTTP server closed: what the spool holds goes to Kafka (and, in
    // one process, through the aggregator) before the consumer and the producer stop.
    if (spoolHandle) w.closers.push(() => spoolHandle.drain(config.shutdownDrainMs))
    watchIngestion(w, ctx, spoolHandle)
    const scheduler = w.services.has('scheduler') ? await startBackgroundWork(w, ctx, redis!) : undefined
    // The scheduler process also relays the system-events outbox to Kafka.
    if (w.services.has('scheduler') && opts.relay !== false) await relayOutbox(w, ctx, app)
    return { app, url, ctx, aggregator, scheduler, spool, spoolHandle, stop: stopAll }
  } catch (err) {
    await stopAll()
    throw err
  }
}

/** What the steps of startPlatform share: the configuration, and what to close on shutdown. */
interface Wiring {
  config: Config
  opts: PlatformOptions
  services: Set<ServiceName>
  clock: Clock
  /** closed in reverse order on shutdown */
  closers: (() => Promise<unknown>)[]
}

type Authenticator = ReturnType<typeof createAuthenticator>

interface Stores {
  chTransport: ReturnType<typeof openTransport>
  ch: ClickHouse
  watchdog: PostgresWatchdog | undefined
  orm: MikroORM
}

/** ClickHouse and Postgres, migrated first when asked. */
async function openStores({ config, opts, closers }: Wiring): Promise<Stores> {
  const chTransport = openTransport(config.clickhouse)
  const ch = ClickHouse.over(chTransport, config.clickhouse)
  closers.push(() => ch.close())
  const stopMemoryReport = reportClickHouseMemory(ch)
  closers.push(async () => stopMemoryReport())
  // One watchdog for every pool of the process: a hung Postgres fails queries instead of holding them.
  const watchdog = config.postgres.noAnswerMs > 0
    ? new PostgresWatchdog(config.databaseUrl, config.postgres, (msg) => console.error(`postgres watchdog: ${msg}`))
    : undefined
  closers.push(async () => watchdog?.stop())
  const orm: MikroORM = await openOrm(config.databaseUrl, 10, config.postgres, watchdog)
  closers.push(() => orm.close())
  // After the Postgres migrations, secrets from before encryption at rest are sealed (rotate-secrets.ts).
  await Promise.all([opts.migrate === true && migratePostgres(orm).then(() => rotateSecrets(orm, config)), opts.migrate && migrateClickHouse(ch).then(() => applyRetention(ch, config.retention))])
  return { chTransport, ch, watchdog, orm }
}

/** The job queues (billing API and scheduler); returns the workers' Redis connection. */
function openQueues({ config, services, closers }: Wiring, ctx: BillingContext): Redis | undefined {
  if (!services.has('billing-api') && !services.has('scheduler')) return undefined
  const redis = createRedis(config.redisUrl)
  closers.push(() => redis.quit())
  // Queues (enqueue, job status) fail fast while Redis is down; workers use `redis` and wait.
  const queueRedis = createQueueRedis(config.redisUrl, config.redisCommandTimeoutMs)
  closers.push(() => queueRedis.quit().catch(() => queueRedis.disconnect()))
  const closed = <Q extends { close(): Promise<unknown> }>(queue: Q): Q => {
    closers.push(() => queue.close())
    return queue
  }
  ctx.webhooks = closed(createWebhookQueue(queueRedis, config.redisPrefix, config.webhooks))
  ctx.invoiceCompute = closed(createInvoiceComputeQueue(queueRedis, config.redisPrefix))
  ctx.integrations = closed(createIntegrationQueue(queueRedis, config.redisPrefix))
  ctx.paymentRetries = closed(createPaymentRetryQueue(queueRedis, config.redisPrefix))
  ctx.environmentClone = closed(createEnvironmentCloneQueue(queueRedis, config.redisPrefix))
  return redis
}

/**
 * Request rate limits (billing API and ingest): their own fail-fast connection, so a Redis
 * outage lets requests through quickly instead of holding them.
 */
function openRateLimits({ config, services, closers }: Wiring, ctx: BillingContext): RequestRateLimiter | undefined {
  if (!services.has('billing-api') && !services.has('ingest')) return undefined
  const limiterRedis = createQueueRedis(config.redisUrl, config.redisCommandTimeoutMs)
  closers.push(() => limiterRedis.quit().catch(() => limiterRedis.disconnect()))
  const limiter = new RequestRateLimiter(limiterRedis, config.redisPrefix, config.requestRateLimit)
  ctx.abuse = new AbuseLimiter(limiterRedis, config.redisPrefix, config.abuse)
  return limiter
}

/**
 * Live access (billing-api/live/): the check's cache and counters, fed by Postgres NOTIFY and
 * by the committed writes the aggregator's process publishes on Redis.
 */
function startLive({ config, services, closers }: Wiring, ctx: BillingContext, redis: Redis | undefined, app: FastifyInstance): LiveAccess | undefined {
  if (!services.has('billing-api')) return undefined
  const subscriber = createRedis(config.redisUrl)
  closers.push(() => subscriber.quit().catch(() => subscriber.disconnect()))
  const live = startLiveAccess(ctx, { subscriber, reader: redis! }, (msg, err) => app.log.error({ err }, msg), (msg, err) => app.log.warn({ err }, msg))
  closers.push(() => live.stop())
  return live
}

async function registerBillingRoutes(app: FastifyInstance, ctx: BillingContext, auth: Authenticator, serviceName: string): Promise<void> {
  await registerOpenApi(app)
  await registerBillingApi(app, ctx, auth)
  await registerConsole(app)
  registerProcessStatus(app, { dataDir: ctx.config.dataDir, service: serviceName, port: ctx.config.port, topology: ctx.config.topology })
}

/**
 * Both halves in one process: ingest can see how far the aggregator is behind. With the
 * spool, its forwarder is paced instead of the HTTP route, so ingest keeps accepting.
 */
function lagGate({ config, services }: Wiring): LagGate | undefined {
  const inProcess = services.has('ingest') && services.has('aggregator') && config.ingestMaxPendingBytes > 0
  return inProcess && !config.spool.enabled ? new LagGate(config.ingestMaxPendingBytes) : undefined
}

/** The ingest routes, on an ingest thread or on this one; returns the spool. */
async function startIngest(w: Wiring, app: FastifyInstance, auth: Authenticator, gate: LagGate | undefined): Promise<{ spool?: IngestSpool; spoolHandle?: SpoolHandle }> {
  const { config, opts, clock, closers } = w
  if (!w.services.has('ingest')) return {}
  const log = (msg: string, err?: unknown) => (err ? app.log.error({ err }, msg) : app.log.warn(msg))
  // The ingest thread keeps its own clock (the system's): a test that moves the clock ingests here.
  if (config.ingestThread === 'worker' && config.spool.enabled && !opts.clock) {
    const ingestThread = await startIngestThread({
      config, log,
      onExit: (code) => {
        app.log.fatal(`the ingest thread exited (${code}); stopping the process`)
        process.exit(1)
      },
    })
    const removeMetrics = addThreadMetrics(() => ingestThread.metrics() as never)
    closers.push(async () => {
      removeMetrics()
      await ingestThread.stop()
    })
    await registerIngestForwarding(app, ingestThread, auth, config.ingestBodyLimitBytes)
    return { spoolHandle: ingestThread }
  }
  const ingest = await openIngest(config, { clock, gate, log }, closers)
  await registerIngest(app, ingest.deps, auth, config.ingestBodyLimitBytes)
  return { spool: ingest.spool, spoolHandle: ingest.spool }
}

/**
 * The processes topology: billing-api passes the event routes on to ingest (one base URL), and
 * the admin API's aggregator consumers live in the aggregator processes.
 */
async function registerTopologyRoutes({ config, services }: Wiring, app: FastifyInstance, ctx: BillingContext, auth: Authenticator): Promise<void> {
  if (config.ingestForwardUrl && services.has('billing-api') && !services.has('ingest')) {
    await registerIngestHttpForwarding(app, { ingestUrl: config.ingestForwardUrl, bodyLimit: config.ingestBodyLimitBytes, errorStatuses: auth.errorStatuses })
  }
  const supervised = config.topology === 'processes' && config.supervisorPid !== undefined
  if (supervised && services.has('aggregator')) registerAggregatorView(app, () => ctx.aggregatorControl)
  if (supervised && services.has('billing-api') && !services.has('aggregator')) {
    ctx.aggregatorControl = topologyAggregators({ dataDir: config.dataDir, supervisorPid: config.supervisorPid!, partitions: config.eventsPartitions })
  }
}

interface AggregationInputs {
  live: LiveAccess | undefined
  gate: LagGate | undefined
  spoolHandle: SpoolHandle | undefined
}

/** The aggregator, on its thread or on this one, and the publisher of its committed writes. */
async function startAggregation(w: Wiring, stores: Stores, ctx: BillingContext, app: FastifyInstance, inputs: AggregationInputs): Promise<Aggregator | undefined> {
  const { config, opts, closers } = w
  const onCommittedWrite = startPublisher(w, app, inputs)
  const onCommitted = inputs.gate && ((c: { bytes: number }) => inputs.gate!.consumed(c.bytes))
  const log = (msg: string, err?: unknown) => app.log.error({ err }, msg)
  const warn = (msg: string, err?: unknown) => app.log.warn({ err }, msg)
  // Hooks are functions of this thread: a test that sets them runs the aggregator here.
  if (config.aggregatorThread === 'worker' && !opts.aggregatorHooks) {
    const thread = await startAggregatorThread({
      config, transport: stores.chTransport, onCommittedWrite, onCommitted: onCommitted || undefined, log, warn,
      onExit: (code) => {
        // Nothing counts events any more: a supervisor (or `npm run up` again) restarts the process.
        app.log.fatal(`the aggregator thread exited (${code}); stopping the process`)
        process.exit(1)
      },
    })
    const removeMetrics = addThreadMetrics(() => thread.metrics() as never)
    ctx.aggregatorControl = thread.control
    closers.push(async () => {
      removeMetrics()
      await thread.stop()
    })
    return undefined
  }
  const aggregatorPg = ShardFence.pool(config.databaseUrl, 8, config.postgres, stores.watchdog)
  closers.push(() => aggregatorPg.end())
  // Operators may run more consumers of the group in this process (admin API): they share
  // the engine and split the partitions, each holding its shards' fence.
  const consumers = consumerSet({
    config, ch: stores.ch, meters: postgresMeterSource(stores.orm), pg: aggregatorPg, hooks: opts.aggregatorHooks,
    onCommittedWrite, onCommitted: onCommitted || undefined, log, warn,
  })
  ctx.aggregatorControl = consumers
  closers.push(() => consumers.stop())
  await consumers.setConsumers(config.aggregatorConsumers)
  return consumers.first
}

/** The committed writes go to the live counters (Redis, and this process's) and to the caller's listener. */
function startPublisher({ config, opts, closers }: Wiring, app: FastifyInstance, { live, spoolHandle }: AggregationInputs): CommittedWriteListener {
  const publishRedis = createQueueRedis(config.redisUrl, config.redisCommandTimeoutMs)
  closers.push(() => publishRedis.quit().catch(() => publishRedis.disconnect()))
  // usage_as_of: only the spool of this process knows when acknowledged events are counted.
  const committedSpool = config.spool.retainUntil === 'committed' ? spoolHandle : undefined
  const publisher = startWritePublisher(publishRedis, config.redisPrefix, {
    asOf: committedSpool ? () => committedSpool.safeBefore() : () => null,
    heartbeatMs: config.live.heartbeatMs,
    local: live?.counters,
    log: (msg, err) => app.log.error({ err }, msg),
  })
  closers.push(async () => publisher.stop())
  return (w) => {
    publisher.listener(w)
    opts.onCommittedWrite?.(w)
  }
}

/** Billing waits for the ingestion watermark to pass a period's end (README, "Billing day"). */
function watchIngestion({ config, services, clock, closers }: Wiring, ctx: BillingContext, spoolHandle: SpoolHandle | undefined): void {
  if (!config.billing.waitForIngestion || !(services.has('scheduler') || services.has('billing-api'))) return
  const watermark = kafkaIngestWatermark({
    admin: createKafka(config, 'billing-watermark').admin(), topic: config.eventsTopic, groupId: config.aggregatorGroupId, clock,
    unforwardedAgeMs: spoolHandle && (() => spoolHandle.oldestUnforwardedMs()), graceMs: config.billing.watermarkGraceMs,
  })
  closers.push(() => watermark.close())
  ctx.ingestWatermark = watermark
}

/** The scheduler and the queues' workers. */
async function startBackgroundWork({ config, opts, clock, closers }: Wiring, ctx: BillingContext, redis: Redis): Promise<Scheduler> {
  const { orm } = ctx
  const stopped = <W extends { stop(): Promise<unknown> }>(worker: W): W => {
    closers.push(() => worker.stop())
    return worker
  }
  const scheduler = stopped(await startScheduler({ ctx, redis, prefix: config.redisPrefix, schedule: opts.schedule }))
  stopped(startWebhookWorker(orm, redis, config.redisPrefix, clock, { ...config.webhooks, outbound: config.outbound, keys: config.integrations }))
  stopped(startInvoiceComputeWorker(ctx, redis, config.redisPrefix))
  stopped(startIntegrationWorker(ctx, redis, config.redisPrefix))
  stopped(startPaymentRetryWorker(ctx, redis, config.redisPrefix))
  stopped(startEnvironmentCloneWorker(orm, redis, config.redisPrefix))
  return scheduler
}

async function relayOutbox({ config, closers }: Wiring, ctx: BillingContext, app: FastifyInstance): Promise<void> {
  const eventsProducer = await createProducer(createKafka(config, 'system-events'))
  closers.push(() => eventsProducer.disconnect())
  const relay = startOutboxRelay(ctx.orm, eventsProducer, config.systemEventsTopic, (msg, err) => app.log.error({ err }, msg), {
    onDeliveries: (ids) => ctx.webhooks!.enqueue(ids),
    integrations: ctx.integrations,
  })
  closers.push(() => relay.stop())
}

/** Starts the given services with config from the environment and stops them on SIGINT/SIGTERM. */
export async function runServices(services: ServiceName[], opts: PlatformOptions = {}): Promise<Platform> {
  const { loadConfigOrExit } = await import('../platform/config.js')
  const platform = await startPlatform(loadConfigOrExit(), { ...opts, services })
  let stopping = false
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return
      stopping = true
      console.log(`${signal}: stopping ${services.join(', ')}...`)
      const t0 = Date.now()
      const report = (how: string) => {
        const left = platform.spoolHandle?.left()
        const lastDrain = platform.spoolHandle?.lastDrain
        const summary = `${how} in ${Date.now() - t0} ms` + (left
          ? left.batches
            ? `; the spool keeps ${left.batches} batches (${left.events} events, ${left.bytes} bytes) not yet in ClickHouse, sent again at the next start`
            : `; the spool was drained${lastDrain ? ` (${lastDrain.ms} ms)` : ''}`
          : '')
        console.log(summary)
        // what `npm run down` prints: the process with the spool says what it keeps (in the
        // processes topology, ingest; the supervisor adds how the whole topology stopped)
        if (!services.includes('ingest')) return
        try {
          writeFileSync(join(platform.ctx.config.dataDir, 'last-stop.txt'), `${new Date().toISOString()} ${summary}\n`)
        } catch {
          // the data directory is gone: nothing to report to `npm run down`
        }
      }
      // Never hang: a stop step stuck on a dead broker or database is left behind (the spool
      // keeps what is not yet safe).
      setTimeout(() => {
        report('stop did not finish; exiting')
        process.exit(1)
      }, platform.ctx.config.shutdownDrainMs + 5000).unref()
      void platform.stop().then(() => {
        report('stopped')
        process.exit(0)
      })
    })
  }
  return platform
}

