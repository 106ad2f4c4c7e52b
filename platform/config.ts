// Configuration is read and validated once at start-up into one typed object.
// Defaults describe the local stack started by `npm run up` / `npm test`; a bad
// value stops the process with a message naming the variable.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const PROJECT_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))

export interface Config {
  host: string
  port: number
  logLevel: string
  dataDir: string
  databaseUrl: string
  redisUrl: string
  redisPrefix: string
  kafkaBrokers: string[]
  kafkaClientId: string
  eventsTopic: string
  systemEventsTopic: string
  aggregatorGroupId: string
  clickhouse: { url?: string; chdbPath: string; database: string; user?: string; password?: string }
  ingestBodyLimitBytes: number
  /** accepted event timestamps: not before `minTime`, not more than `maxFutureMinutes` ahead of the clock */
  ingestTimeWindow: { minTime: Date; maxFutureMinutes: number }
  http: { maxUrlBytes: number; maxHeaderBytes: number }
  /** fail fast when Postgres is down: pool acquire and connect deadlines */
  postgres: { acquireTimeoutMs: number; connectTimeoutMs: number }
  /** fail fast when Redis is down: per-command deadline of the enqueueing connection */
  redisCommandTimeoutMs: number
  /** all-in-one only; see platform/lag-gate.ts. 0 disables. */
  ingestMaxPendingBytes: number
  /** ingest/spool: the disk log every accepted batch goes through before Kafka */
  spool: SpoolConfig
  /** SIGTERM: how long the spool and the aggregator may drain before the process stops */
  shutdownDrainMs: number
  apiKeyCacheTtlMs: number
  finalizationDelayMinutes: number
  billingScheduleEveryMs: number
  webhooks: { timeoutMs: number; attempts: number; backoffMs: number }
  /** billing-api/integrations: key for provider credentials at rest, Stripe API base, default sync rate */
  integrations: { encryptionKey: Buffer; stripeApiBase: string; rateLimitPerSecond: number }
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
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>

function str(env: Env, name: string, fallback: string): string {
  const v = env[name]
  return v === undefined || v === '' ? fallback : v
}

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min) {
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`)
  }
  return Number(raw)
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, values: readonly T[]): T {
  const v = str(env, name, fallback)
  if (!values.includes(v as T)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${v}"`)
  return v as T
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  return oneOf(env, name, fallback ? 'true' : 'false', ['true', 'false']) === 'true'
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
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

function isoTime(env: Env, name: string, fallback: string): Date {
  const raw = str(env, name, fallback)
  const d = new Date(raw)
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(raw) || Number.isNaN(d.getTime())) {
    throw new ConfigError(`${name} must be an ISO 8601 date or date-time (2000-01-01T00:00:00Z), got "${raw}"`)
  }
  return d
}

// Local stacks and tests only: production (NODE_ENV=production) must set its own key.
const DEV_INTEGRATIONS_KEY = createHash('sha256').update('meterline-local-integrations-key').digest()

/** 32 bytes for AES-256-GCM, as 64 hex characters or base64. */
function encryptionKey(env: Env, name: string): Buffer {
  const raw = env[name]
  if (raw === undefined || raw === '') {
    if (env.NODE_ENV === 'production') throw new ConfigError(`${name} is required when NODE_ENV=production (32 bytes, hex or base64)`)
    return DEV_INTEGRATIONS_KEY
  }
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64')
  if (key.length !== 32) throw new ConfigError(`${name} must be 32 bytes as 64 hex characters or base64, got ${key.length} bytes`)
  return key
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

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const dataDir = resolve(str(env, 'METERLINE_DATA_DIR', join(PROJECT_ROOT, '.data')))
  const clickhouseUrl = env.CLICKHOUSE_URL ? url(env, 'CLICKHOUSE_URL', '', ['http:', 'https:']) : undefined
  const config: Config = {
    host: str(env, 'HOST', '127.0.0.1'),
    port: int(env, 'PORT', 8080),
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    dataDir,
    databaseUrl: url(env, 'DATABASE_URL', 'postgres://meterline:meterline@127.0.0.1:54329/meterline', ['postgres:', 'postgresql:']),
    redisUrl: url(env, 'REDIS_URL', 'redis://127.0.0.1:63799', ['redis:', 'rediss:']),
    redisPrefix: str(env, 'REDIS_PREFIX', 'meterline'),
    kafkaBrokers: overrides.kafkaBrokers ?? kafkaBrokers(env, dataDir),
    kafkaClientId: str(env, 'KAFKA_CLIENT_ID', 'meterline'),
    eventsTopic: str(env, 'KAFKA_EVENTS_TOPIC', 'events'),
    systemEventsTopic: str(env, 'KAFKA_SYSTEM_EVENTS_TOPIC', 'system_events'),
    aggregatorGroupId: str(env, 'KAFKA_AGGREGATOR_GROUP', 'meterline-aggregator'),
    clickhouse: {
      url: clickhouseUrl,
      chdbPath: resolve(str(env, 'CHDB_PATH', join(dataDir, 'chdb'))),
      database: str(env, 'CLICKHOUSE_DATABASE', 'meterline'),
      user: env.CLICKHOUSE_USER,
      password: env.CLICKHOUSE_PASSWORD,
    },
    ingestBodyLimitBytes: int(env, 'INGEST_BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024),
    ingestTimeWindow: {
      minTime: isoTime(env, 'INGEST_MIN_EVENT_TIME', '2000-01-01T00:00:00Z'),
      maxFutureMinutes: int(env, 'INGEST_MAX_FUTURE_MINUTES', 5),
    },
    http: {
      maxUrlBytes: int(env, 'HTTP_MAX_URL_BYTES', 8 * 1024, 256),
      maxHeaderBytes: int(env, 'HTTP_MAX_HEADER_BYTES', 16 * 1024, 1024),
    },
    postgres: {
      acquireTimeoutMs: int(env, 'PG_ACQUIRE_TIMEOUT_MS', 1500, 100),
      connectTimeoutMs: int(env, 'PG_CONNECT_TIMEOUT_MS', 1000, 100),
    },
    redisCommandTimeoutMs: int(env, 'REDIS_COMMAND_TIMEOUT_MS', 1500, 100),
    ingestMaxPendingBytes: int(env, 'INGEST_MAX_PENDING_BYTES', 12 * 1024 * 1024),
    spool: {
      enabled: bool(env, 'SPOOL_ENABLED', true),
      dir: resolve(str(env, 'SPOOL_DIR', join(dataDir, 'spool'))),
      retainUntil: oneOf(env, 'SPOOL_RETAIN_UNTIL', 'committed', ['committed', 'acked'] as const),
      maxBytes: int(env, 'SPOOL_MAX_BYTES', 2 * 1024 ** 3, 1024 * 1024),
      segmentBytes: int(env, 'SPOOL_SEGMENT_BYTES', 16 * 1024 * 1024, 64 * 1024),
      memoryBytes: int(env, 'SPOOL_MEMORY_BYTES', 64 * 1024 * 1024),
      resendAfterMs: int(env, 'SPOOL_RESEND_AFTER_MS', 60_000, 1000),
    },
    shutdownDrainMs: int(env, 'SHUTDOWN_DRAIN_MS', 7000),
    apiKeyCacheTtlMs: int(env, 'API_KEY_CACHE_TTL_MS', 30_000),
    finalizationDelayMinutes: int(env, 'FINALIZATION_DELAY_MINUTES', 120),
    billingScheduleEveryMs: int(env, 'BILLING_SCHEDULE_EVERY_MS', 120_000, 1000),
    webhooks: {
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100),
      attempts: int(env, 'WEBHOOK_MAX_ATTEMPTS', 5, 1),
      backoffMs: int(env, 'WEBHOOK_BACKOFF_MS', 1_000, 1),
    },
    integrations: {
      encryptionKey: encryptionKey(env, 'INTEGRATIONS_ENCRYPTION_KEY'),
      stripeApiBase: url(env, 'STRIPE_API_BASE', 'https://api.stripe.com', ['http:', 'https:']),
      rateLimitPerSecond: int(env, 'INTEGRATION_EVENTS_RATE_LIMIT_PER_SECOND', 10, 1),
    },
    metricLabels: {
      tenantAllowlist: str(env, 'METRICS_TENANT_ALLOWLIST', '').split(',').map((t) => t.trim()).filter(Boolean),
      tenantBuckets: int(env, 'METRICS_TENANT_BUCKETS', 8),
      metersPerTenant: int(env, 'METRICS_METERS_PER_TENANT', 20),
    },
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
