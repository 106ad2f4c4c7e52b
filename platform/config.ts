// Configuration is read and validated once at start-up into one typed object.
// Defaults describe the local stack started by `npm run up` / `npm test`; a bad
// value stops the process with a message naming the variable.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseAllowList } from './outbound-address.js'
import type { OutboundPolicy } from './outbound-url-guard.js'
import type { AbuseRules } from './abuse-limit.js'
import type { PostgresDeadlines } from './postgres-watchdog.js'
import { settingDefault, type SettingName } from './settings.js'

export const PROJECT_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))

/** days a dedup key outlives the ingest acceptance window (README, "Data lifecycle") */
export const DEDUP_MARGIN_DAYS = 2

export interface Config {
  host: string
  port: number
  /** `npm run up`: the roles as separate processes, or all in one */
  topology: 'processes' | 'all-in-one'
  topologyAggregators: number
  /** the topology supervisor's pid, set for the roles it runs */
  supervisorPid: number | undefined
  clickhouseEndpointPort: number
  logLevel: string
  dataDir: string
  databaseUrl: string
  redisUrl: string
  redisPrefix: string
  kafkaBrokers: string[]
  kafkaClientId: string
  eventsTopic: string
  eventsPartitions: number
  usageAudit: { everyMs: number; samples: number }
  aggregatorConsumers: number
  /** minutes of event time whose dedup keys a writer keeps in memory (AGGREGATOR_HOT_WINDOW_MINUTES) */
  aggregatorHotWindowMinutes: number
  /** worker: the aggregator's consumers run in a worker thread of the process */
  aggregatorThread: 'worker' | 'main'
  ingestThread: 'worker' | 'main'
  systemEventsTopic: string
  aggregatorGroupId: string
  /** KAFKA_GROUP_SYNC_DELAY_MS */
  kafkaGroupSyncDelayMs: number
  clickhouse: { url?: string; chdbPath: string; chdbConnections: number; database: string; user?: string; password?: string; requestTimeoutMs: number }
  ingestBodyLimitBytes: number
  /** billing-api forwards the ingest routes here (ingest is another process) */
  ingestForwardUrl: string | undefined
  /** accepted event timestamps: not before `minTime`, not more than `maxFutureMinutes` ahead of the clock */
  ingestTimeWindow: { minTime: Date; maxFutureMinutes: number; maxAgeDays: number }
  /** TTLs of the tables that grow with every event (clickhouse/retention.ts); days, 0: forever */
  retention: { eventsRawDays: number; meterEventsDays: number; dedupHorizonDays: number }
  http: { maxUrlBytes: number; maxHeaderBytes: number; trustProxy: TrustProxy }
  /** fail fast when Postgres is down or hung: pool acquire and connect deadlines, server-side statement deadlines, the watchdog */
  postgres: PostgresDeadlines
  /** limits on callers without a valid API key, per source address or webhook connection (platform/abuse-limit.ts) */
  abuse: AbuseRules
  /** fail fast when Redis is down: per-command deadline of the enqueueing connection */
  redisCommandTimeoutMs: number
  /** all-in-one only; see platform/lag-gate.ts. 0 disables. */
  ingestMaxPendingBytes: number
  ingestMaxPendingPartitionBytes: number
  /** ingest/spool: the disk log every accepted batch goes through before Kafka */
  spool: SpoolConfig
  /** SIGTERM: how long the spool and the aggregator may drain before the process stops */
  shutdownDrainMs: number
  apiKeyCacheTtlMs: number
  finalizationDelayMinutes: number
  billingScheduleEveryMs: number
  /** scheduler: BullMQ lockDuration (and stalled-check interval) of its jobs */
  schedulerLockMs: number
  billing: {
    batchSize: number
    runConcurrency: number
    waitForIngestion: boolean
    watermarkGraceMs: number
    watermarkWaitMs: number
  }
  /** billing-api/usage-alerts: how often feature usage is compared with the alert thresholds */
  usageAlertsEveryMs: number
  live: { maxCustomers: number; maxCounters: number; scopeLoad: boolean; heartbeatMs: number; spendCapConcurrency: number }
  /** billing-api/analytics: customers per page of the streamed usage export */
  usageExportPageSize: number
  webhooks: WebhookConfig
  /**
   * billing-api/integrations: key for provider credentials and webhook signing secrets at rest
   * (and the one it replaces, during a rotation), Stripe API base, default sync rate
   */
  integrations: { encryptionKey: Buffer; previousEncryptionKey?: Buffer; stripeApiBase: string; rateLimitPerSecond: number }
  /** billing-api/payments: delays of the dunning retries after the 1st, 2nd, ... failed payment attempt */
  paymentRetryScheduleMs: number[]
  /** bearer token of the operators' API (billing-api/admin); undefined: that API is off */
  adminToken?: string
  /**
   * Inbound request limits (billing API and ingest) per API key and per tenant, requests per
   * window; 0 = no limit. A tenant's own limits (tenants.rate_limit_per_*) override these.
   */
  requestRateLimit: { windowSeconds: number; perKey: number; perTenant: number }
  /** HMAC key of stored API key hashes, and the one it replaces during a rotation */
  apiKeyHashing: { secret: Buffer; previous?: Buffer }
  /** SSRF guard for tenant-supplied URLs: OUTBOUND_URL_ALLOW exempts destinations (local development, tests) */
  outbound: OutboundPolicy
  /** billing-api/ai-pricing: the rule-based reader, or an OpenAI-compatible endpoint with it as the fallback */
  pricingParser: PricingParserConfig
  /** HS256 secret of the JWTs whose environment_id claim selects the environment; null: bearer tokens are refused */
  authJwtSecret: Buffer | null
  /** POST /v1/signup creates tenants without an API key */
  signupEnabled: boolean
  /** per-tenant metric labels, bounded (platform/metric-labels.ts) */
  metricLabels: MetricLabelConfig
}

export interface MetricLabelConfig {
  /** tenants labelled by their id; every other tenant falls into one of `tenantBuckets` */
  tenantAllowlist: string[]
  tenantBuckets: number
  /** distinct meter labels per allow-listed tenant and process; later meters are "other" */
  metersPerTenant: number
}

export interface WebhookConfig {
  timeoutMs: number
  attempts: number
  backoffMs: number
  /** parallel deliveries of one scheduler process */
  workerConcurrency: number
  /** in-flight deliveries per endpoint and per tenant, across processes (billing-api/webhooks/delivery-gate.ts) */
  endpointConcurrency: number
  tenantConcurrency: number
  /** consecutive failed attempts that open an endpoint's circuit (0: never), and how long it stays open */
  circuitFailures: number
  circuitCooldownMs: number
}

export type PricingParserConfig =
  | { kind: 'deterministic' }
  | { kind: 'openai'; llm: { url: string; apiKey: string; model: string; timeoutMs: number } }

export interface SpoolConfig {
  enabled: boolean
  dir: string
  /** committed: kept until the in-process aggregator committed it (in-memory broker); acked: until Kafka acknowledged it */
  retainUntil: 'committed' | 'acked'
  maxBytes: number
  segmentBytes: number
  /** batches beyond this many bytes wait for the forwarder on disk only */
  memoryBytes: number
  /** committed: a record Kafka acknowledged but the aggregator did not commit within this time is sent again */
  resendAfterMs: number
  /** committed: a partition with records not yet committed holds new ones back this long, so they travel together */
  lingerMs: number
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>

/** The default platform/settings.ts lists for `name` (a setting read here without one is a bug). */
function listed(name: SettingName): string {
  const fallback = settingDefault(name)
  if (fallback === undefined) throw new Error(`platform/settings.ts lists no default for ${name}`)
  return fallback
}

function str(env: Env, name: SettingName, fallback = listed(name)): string {
  const v = env[name]
  return v === undefined || v === '' ? fallback : v
}

function int(env: Env, name: SettingName, min = 0): number {
  const raw = str(env, name)
  if (!/^\d+$/.test(raw) || Number(raw) < min) {
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`)
  }
  return Number(raw)
}

/** a setting without a default: undefined when unset */
function optionalInt(env: Env, name: SettingName, min = 0): number | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`)
  return Number(raw)
}

function oneOf<T extends string>(env: Env, name: SettingName, values: readonly T[]): T {
  const v = str(env, name)
  if (!values.includes(v as T)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${v}"`)
  return v as T
}

function bool(env: Env, name: SettingName): boolean {
  return oneOf(env, name, ['true', 'false']) === 'true'
}

function url(env: Env, name: SettingName, fallback: string, protocols: string[]): string {
  const v = str(env, name, fallback)
  let parsed: URL
  try {
    parsed = new URL(v)
  } catch {
    throw new ConfigError(`${name} is not a valid URL: "${v}"`)
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`)
  }
  return v
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** A comma-separated list of durations such as `1d,3d,12h,30m`; `none` is an empty list. */
function durations(env: Env, name: SettingName): number[] {
  const raw = str(env, name).trim()
  if (raw === 'none') return []
  return raw.split(',').map((part) => {
    const m = /^(\d{1,9})(ms|s|m|h|d)$/.exec(part.trim())
    if (!m || Number(m[1]) === 0) throw new ConfigError(`${name} must be a comma-separated list of positive durations like 1d,3d,12h,30m,10s, or none; got "${part.trim()}"`)
    return Number(m[1]) * DURATION_UNITS_MS[m[2]]
  })
}

function isoTime(env: Env, name: SettingName): Date {
  const raw = str(env, name)
  const d = new Date(raw)
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(raw) || Number.isNaN(d.getTime())) {
    throw new ConfigError(`${name} must be an ISO 8601 date or date-time (2000-01-01T00:00:00Z), got "${raw}"`)
  }
  return d
}

// Local stacks and tests only: production (NODE_ENV=production) must set its own keys.
const DEV_INTEGRATIONS_KEY = createHash('sha256').update('meterline-local-integrations-key').digest()
const DEV_API_KEY_HASH_SECRET = createHash('sha256').update('meterline-local-api-key-hash-secret').digest()

/** 32 bytes for AES-256-GCM (or HMAC-SHA256), as 64 hex characters or base64. */
function encryptionKey(env: Env, name: SettingName, devKey: Buffer = DEV_INTEGRATIONS_KEY): Buffer {
  const raw = env[name]
  if (raw === undefined || raw === '') {
    if (env.NODE_ENV === 'production') throw new ConfigError(`${name} is required when NODE_ENV=production (32 bytes, hex or base64)`)
    return devKey
  }
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64')
  if (key.length !== 32) throw new ConfigError(`${name} must be 32 bytes as 64 hex characters or base64, got ${key.length} bytes`)
  return key
}

/** A key being rotated out: optional, same format, and not the current key. */
function previousKey(env: Env, name: SettingName, current: Buffer): Buffer | undefined {
  if (!env[name]) return undefined
  const key = encryptionKey(env, name)
  if (key.equals(current)) throw new ConfigError(`${name} is the same key as the current one`)
  return key
}

function allowList(env: Env, name: SettingName): OutboundPolicy['allow'] {
  try {
    return parseAllowList(str(env, name, ''))
  } catch (err) {
    throw new ConfigError(`${name}: ${(err as Error).message}`)
  }
}

export const ADMIN_TOKEN_MIN_LENGTH = 24

function adminToken(env: Env): string | undefined {
  const raw = env.ADMIN_TOKEN
  if (raw === undefined || raw === '') return undefined
  if (raw.length < ADMIN_TOKEN_MIN_LENGTH || /\s/.test(raw)) {
    throw new ConfigError(`ADMIN_TOKEN must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters without spaces (e.g. openssl rand -hex 24)`)
  }
  return raw
}

function pricingParser(env: Env): PricingParserConfig {
  const kind = oneOf(env, 'PRICING_PARSER', ['deterministic', 'openai'] as const)
  if (kind === 'deterministic') return { kind }
  const apiKey = str(env, 'PRICING_LLM_API_KEY', '')
  if (!apiKey) throw new ConfigError('PRICING_LLM_API_KEY is required with PRICING_PARSER=openai')
  return {
    kind,
    llm: {
      url: url(env, 'PRICING_LLM_URL', listed('PRICING_LLM_URL'), ['http:', 'https:']),
      apiKey,
      model: str(env, 'PRICING_LLM_MODEL'),
      timeoutMs: int(env, 'PRICING_LLM_TIMEOUT_MS', 100),
    },
  }
}

function jwtSecret(env: Env): Buffer | null {
  const v = str(env, 'AUTH_JWT_SECRET', '')
  if (!v) return null
  if (Buffer.byteLength(v) < 32) throw new ConfigError('AUTH_JWT_SECRET must be at least 32 bytes')
  return Buffer.from(v)
}

/** fastify's trustProxy: false, true, a number of proxy hops, or a comma-separated list of proxy addresses/CIDRs. */
export type TrustProxy = boolean | string | ((address: string, hop: number) => boolean)

function trustProxy(env: Env): TrustProxy {
  const v = str(env, 'HTTP_TRUST_PROXY')
  if (v === 'false' || v === 'true') return v === 'true'
  if (/^\d+$/.test(v)) {
    const hops = Number(v)
    return (_address, hop) => hop < hops
  }
  return v
}

/** Local mode: the broker launcher writes its (random) bootstrap address here. */
function kafkaBrokers(env: Env, dataDir: string): string[] {
  let raw = env.KAFKA_BROKERS
  if (!raw) {
    const file = join(dataDir, 'kafka', 'bootstrap')
    if (!existsSync(file)) {
      throw new ConfigError(`KAFKA_BROKERS is not set and ${file} does not exist (is the local stack running? npm run up)`)
    }
    raw = readFileSync(file, 'utf8').trim()
  }
  const brokers = raw.split(',').map((b) => b.trim()).filter(Boolean)
  for (const b of brokers) {
    if (!/^[\w.-]+:\d+$/.test(b)) throw new ConfigError(`KAFKA_BROKERS entry "${b}" is not host:port`)
  }
  if (brokers.length === 0) throw new ConfigError('KAFKA_BROKERS is empty')
  return brokers
}

// eslint-disable-next-line max-lines-per-function -- a flat table: one line per setting (platform/settings.ts)
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const dataDir = resolve(str(env, 'METERLINE_DATA_DIR', join(PROJECT_ROOT, '.data')))
  const clickhouseUrl = env.CLICKHOUSE_URL ? url(env, 'CLICKHOUSE_URL', '', ['http:', 'https:']) : undefined
  const config: Config = {
    host: str(env, 'HOST'),
    port: int(env, 'PORT'),
    topology: oneOf(env, 'PLATFORM_TOPOLOGY', ['processes', 'all-in-one'] as const),
    topologyAggregators: int(env, 'TOPOLOGY_AGGREGATORS', 1),
    supervisorPid: optionalInt(env, 'METERLINE_SUPERVISOR_PID', 1),
    clickhouseEndpointPort: int(env, 'CLICKHOUSE_ENDPOINT_PORT'),
    logLevel: str(env, 'LOG_LEVEL'),
    dataDir,
    // The local stack's ports (scripts/stack.sh) decide the default URLs, so PG_PORT and REDIS_PORT suffice.
    databaseUrl: url(env, 'DATABASE_URL', `postgres://meterline:meterline@127.0.0.1:${int(env, 'PG_PORT', 1)}/meterline`, ['postgres:', 'postgresql:']),
    redisUrl: url(env, 'REDIS_URL', `redis://127.0.0.1:${int(env, 'REDIS_PORT', 1)}`, ['redis:', 'rediss:']),
    redisPrefix: str(env, 'REDIS_PREFIX'),
    kafkaBrokers: overrides.kafkaBrokers ?? kafkaBrokers(env, dataDir),
    kafkaClientId: str(env, 'KAFKA_CLIENT_ID'),
    eventsTopic: str(env, 'KAFKA_EVENTS_TOPIC'),
    eventsPartitions: int(env, 'KAFKA_EVENTS_PARTITIONS', 1),
    usageAudit: { everyMs: int(env, 'USAGE_AUDIT_EVERY_MS'), samples: int(env, 'USAGE_AUDIT_SAMPLES', 1) },
    aggregatorConsumers: int(env, 'AGGREGATOR_CONSUMERS', 1),
    aggregatorThread: oneOf(env, 'AGGREGATOR_THREAD', ['worker', 'main'] as const),
    aggregatorHotWindowMinutes: int(env, 'AGGREGATOR_HOT_WINDOW_MINUTES', 1),
    ingestThread: oneOf(env, 'INGEST_THREAD', ['worker', 'main'] as const),
    systemEventsTopic: str(env, 'KAFKA_SYSTEM_EVENTS_TOPIC'),
    aggregatorGroupId: str(env, 'KAFKA_AGGREGATOR_GROUP'),
    kafkaGroupSyncDelayMs: int(env, 'KAFKA_GROUP_SYNC_DELAY_MS'),
    clickhouse: {
      url: clickhouseUrl,
      chdbPath: resolve(str(env, 'CHDB_PATH', join(dataDir, 'chdb'))),
      chdbConnections: int(env, 'CHDB_CONNECTIONS', 1),
      requestTimeoutMs: int(env, 'CLICKHOUSE_REQUEST_TIMEOUT_MS', 1000),
      database: str(env, 'CLICKHOUSE_DATABASE'),
      user: env.CLICKHOUSE_USER,
      password: env.CLICKHOUSE_PASSWORD,
    },
    ingestBodyLimitBytes: int(env, 'INGEST_BODY_LIMIT_BYTES', 1024),
    ingestForwardUrl: env.INGEST_FORWARD_URL ? url(env, 'INGEST_FORWARD_URL', '', ['http:', 'https:']).replace(/\/$/, '') : undefined,
    ingestTimeWindow: {
      minTime: isoTime(env, 'INGEST_MIN_EVENT_TIME'),
      maxFutureMinutes: int(env, 'INGEST_MAX_FUTURE_MINUTES'),
      maxAgeDays: int(env, 'INGEST_MAX_EVENT_AGE_DAYS'),
    },
    retention: {
      eventsRawDays: int(env, 'RETENTION_EVENTS_RAW_DAYS'),
      meterEventsDays: int(env, 'RETENTION_METER_EVENTS_DAYS'),
      // A copy of an event is refused by ingest once the event is older than its window; the
      // margin covers an event that waited in the spool or Kafka past the window's edge.
      dedupHorizonDays: int(env, 'INGEST_MAX_EVENT_AGE_DAYS') > 0 ? int(env, 'INGEST_MAX_EVENT_AGE_DAYS') + DEDUP_MARGIN_DAYS : 0,
    },
    http: {
      maxUrlBytes: int(env, 'HTTP_MAX_URL_BYTES', 256),
      maxHeaderBytes: int(env, 'HTTP_MAX_HEADER_BYTES', 1024),
      trustProxy: trustProxy(env),
    },
    postgres: {
      acquireTimeoutMs: int(env, 'PG_ACQUIRE_TIMEOUT_MS', 100),
      connectTimeoutMs: int(env, 'PG_CONNECT_TIMEOUT_MS', 100),
      statementTimeoutMs: int(env, 'PG_STATEMENT_TIMEOUT_MS', 100),
      lockTimeoutMs: int(env, 'PG_LOCK_TIMEOUT_MS', 10),
      idleInTransactionTimeoutMs: int(env, 'PG_IDLE_IN_TRANSACTION_TIMEOUT_MS', 1000),
      noAnswerMs: int(env, 'PG_NO_ANSWER_MS'),
      probeTimeoutMs: int(env, 'PG_PROBE_TIMEOUT_MS', 50),
    },
    abuse: {
      auth_failures: { limit: int(env, 'AUTH_FAILURE_LIMIT'), windowSeconds: int(env, 'AUTH_FAILURE_WINDOW_SECONDS', 1) },
      signup: { limit: int(env, 'SIGNUP_LIMIT'), windowSeconds: int(env, 'SIGNUP_WINDOW_SECONDS', 1) },
      webhook_connection: { limit: int(env, 'INBOUND_WEBHOOK_LIMIT'), windowSeconds: int(env, 'INBOUND_WEBHOOK_WINDOW_SECONDS', 1) },
      webhook_failures: { limit: int(env, 'INBOUND_WEBHOOK_FAILURE_LIMIT'), windowSeconds: int(env, 'INBOUND_WEBHOOK_WINDOW_SECONDS', 1) },
    },
    redisCommandTimeoutMs: int(env, 'REDIS_COMMAND_TIMEOUT_MS', 100),
    ingestMaxPendingBytes: int(env, 'INGEST_MAX_PENDING_BYTES'),
    ingestMaxPendingPartitionBytes: int(env, 'INGEST_MAX_PENDING_PARTITION_BYTES'),
    spool: {
      enabled: bool(env, 'SPOOL_ENABLED'),
      dir: resolve(str(env, 'SPOOL_DIR', join(dataDir, 'spool'))),
      retainUntil: oneOf(env, 'SPOOL_RETAIN_UNTIL', ['committed', 'acked'] as const),
      maxBytes: int(env, 'SPOOL_MAX_BYTES', 1024 * 1024),
      segmentBytes: int(env, 'SPOOL_SEGMENT_BYTES', 64 * 1024),
      memoryBytes: int(env, 'SPOOL_MEMORY_BYTES'),
      resendAfterMs: int(env, 'SPOOL_RESEND_AFTER_MS', 1000),
      lingerMs: int(env, 'SPOOL_LINGER_MS', 0),
    },
    shutdownDrainMs: int(env, 'SHUTDOWN_DRAIN_MS'),
    apiKeyCacheTtlMs: int(env, 'API_KEY_CACHE_TTL_MS'),
    finalizationDelayMinutes: int(env, 'FINALIZATION_DELAY_MINUTES'),
    billingScheduleEveryMs: int(env, 'BILLING_SCHEDULE_EVERY_MS', 1000),
    schedulerLockMs: int(env, 'SCHEDULER_LOCK_MS', 100),
    billing: {
      batchSize: int(env, 'BILLING_BATCH_SIZE', 1),
      runConcurrency: int(env, 'BILLING_RUN_CONCURRENCY', 1),
      waitForIngestion: bool(env, 'BILLING_WAIT_FOR_INGESTION'),
      watermarkGraceMs: int(env, 'BILLING_WATERMARK_GRACE_MS'),
      watermarkWaitMs: int(env, 'BILLING_WATERMARK_WAIT_MS'),
    },
    usageAlertsEveryMs: int(env, 'USAGE_ALERTS_EVERY_MS', 1000),
    live: {
      maxCustomers: int(env, 'LIVE_CACHE_MAX_CUSTOMERS', 1),
      maxCounters: int(env, 'LIVE_COUNTERS_MAX', 1),
      scopeLoad: bool(env, 'LIVE_COUNTER_SCOPE_LOAD'),
      heartbeatMs: int(env, 'LIVE_HEARTBEAT_MS', 10),
      spendCapConcurrency: int(env, 'LIVE_SPEND_CAP_CONCURRENCY', 1),
    },
    usageExportPageSize: int(env, 'USAGE_EXPORT_PAGE_SIZE', 1),
    webhooks: {
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 100),
      attempts: int(env, 'WEBHOOK_MAX_ATTEMPTS', 1),
      backoffMs: int(env, 'WEBHOOK_BACKOFF_MS', 1),
      workerConcurrency: int(env, 'WEBHOOK_WORKER_CONCURRENCY', 2),
      endpointConcurrency: int(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 1),
      tenantConcurrency: int(env, 'WEBHOOK_TENANT_CONCURRENCY', 1),
      circuitFailures: int(env, 'WEBHOOK_CIRCUIT_FAILURES'),
      circuitCooldownMs: int(env, 'WEBHOOK_CIRCUIT_COOLDOWN_MS', 100),
    },
    integrations: {
      encryptionKey: encryptionKey(env, 'INTEGRATIONS_ENCRYPTION_KEY'),
      previousEncryptionKey: previousKey(env, 'INTEGRATIONS_ENCRYPTION_KEY_PREVIOUS', encryptionKey(env, 'INTEGRATIONS_ENCRYPTION_KEY')),
      stripeApiBase: url(env, 'STRIPE_API_BASE', listed('STRIPE_API_BASE'), ['http:', 'https:']),
      rateLimitPerSecond: int(env, 'INTEGRATION_EVENTS_RATE_LIMIT_PER_SECOND', 1),
    },
    paymentRetryScheduleMs: durations(env, 'PAYMENT_RETRY_SCHEDULE'),
    adminToken: adminToken(env),
    outbound: { allow: allowList(env, 'OUTBOUND_URL_ALLOW') },
    requestRateLimit: {
      windowSeconds: int(env, 'RATE_LIMIT_WINDOW_SECONDS', 1),
      perKey: int(env, 'RATE_LIMIT_PER_KEY'),
      perTenant: int(env, 'RATE_LIMIT_PER_TENANT'),
    },
    apiKeyHashing: {
      secret: encryptionKey(env, 'API_KEY_HASH_SECRET', DEV_API_KEY_HASH_SECRET),
      previous: previousKey(env, 'API_KEY_HASH_SECRET_PREVIOUS', encryptionKey(env, 'API_KEY_HASH_SECRET', DEV_API_KEY_HASH_SECRET)),
    },
    pricingParser: pricingParser(env),
    authJwtSecret: jwtSecret(env),
    signupEnabled: bool(env, 'SIGNUP_ENABLED'),
    metricLabels: {
      tenantAllowlist: str(env, 'METRICS_TENANT_ALLOWLIST', '').split(',').map((t) => t.trim()).filter(Boolean),
      tenantBuckets: int(env, 'METRICS_TENANT_BUCKETS'),
      metersPerTenant: int(env, 'METRICS_METERS_PER_TENANT'),
    },
  }
  const wh = config.webhooks
  // A tenant must never be able to hold every worker slot of a process, or the others wait for it.
  if (wh.tenantConcurrency >= wh.workerConcurrency) {
    throw new ConfigError(`WEBHOOK_TENANT_CONCURRENCY (${wh.tenantConcurrency}) must be below WEBHOOK_WORKER_CONCURRENCY (${wh.workerConcurrency})`)
  }
  if (wh.endpointConcurrency > wh.tenantConcurrency) {
    throw new ConfigError(`WEBHOOK_ENDPOINT_CONCURRENCY (${wh.endpointConcurrency}) must not exceed WEBHOOK_TENANT_CONCURRENCY (${wh.tenantConcurrency})`)
  }
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(config.clickhouse.database)) {
    throw new ConfigError(`CLICKHOUSE_DATABASE must be a plain identifier, got "${config.clickhouse.database}"`)
  }
  return { ...config, ...overrides }
}

/** For entrypoints: load config or exit with a message naming the bad variable. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig()
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`)
      process.exit(2)
    }
    throw err
  }
}
