// Every environment variable Meterline reads, in one declarative list: platform/config.ts takes
// its defaults from here (its readers accept only these names), `npm run docs:config` writes the
// README's configuration table from it, and platform/settings.test.ts fails when code or a
// shell script reads a variable this list does not name, or when the README table differs.

export type SettingReader = 'services' | 'CLI' | 'stack scripts' | 'tests' | 'benchmarks'

export interface Setting {
  /** used when the variable is unset or empty; absent: computed by its reader, or no default */
  default?: string
  /** the default as documented, when it is computed or reads better than the raw value */
  shown?: string
  readBy: SettingReader
  meaning: string
}

export const SETTINGS = {
  // services: platform/config.ts
  HOST: { default: '127.0.0.1', readBy: 'services', meaning: 'HTTP listen address' },
  PORT: { default: '8080', readBy: 'services', meaning: 'HTTP listen port' },
  PLATFORM_TOPOLOGY: {
    default: 'processes', readBy: 'services',
    meaning: "`npm run up`: `processes` runs the production topology (the local ClickHouse endpoint, ingest, `TOPOLOGY_AGGREGATORS` aggregators, billing-api and the scheduler as supervised processes over HTTP; ingest at `PORT`+1, the scheduler at `PORT`+2, aggregator i at `PORT`+10+i); `all-in-one`: the four services in one process with the engine in-process",
  },
  METERLINE_SUPERVISOR_PID: { readBy: 'services', shown: 'unset', meaning: 'set by the topology supervisor for its roles: a role stops itself when that process is gone' },
  TOPOLOGY_AGGREGATORS: { default: '2', readBy: 'services', meaning: 'aggregator processes of the `processes` topology' },
  LOG_LEVEL: { default: 'info', readBy: 'services', meaning: 'pino log level (`fatal` ... `trace`)' },
  NODE_ENV: { readBy: 'services', shown: 'unset', meaning: '`production` makes `INTEGRATIONS_ENCRYPTION_KEY` and `API_KEY_HASH_SECRET` required' },
  METERLINE_DATA_DIR: {
    readBy: 'services', shown: '`.data` in the checkout',
    meaning: 'local data: Postgres, Redis, broker files, chDB, the spool, pid files and the local admin token (also read by the stack scripts)',
  },
  PG_PORT: {
    default: '54329', readBy: 'services',
    meaning: 'port of the local Postgres (`scripts/stack.sh`); the default `DATABASE_URL` uses it',
  },
  REDIS_PORT: {
    default: '63799', readBy: 'services',
    meaning: 'port of the local Redis (`scripts/stack.sh`); the default `REDIS_URL` uses it',
  },
  DATABASE_URL: {
    readBy: 'services', shown: '`postgres://meterline:meterline@127.0.0.1:$PG_PORT/meterline`', meaning: 'Postgres',
  },
  REDIS_URL: { readBy: 'services', shown: '`redis://127.0.0.1:$REDIS_PORT`', meaning: 'Redis (BullMQ queues)' },
  REDIS_PREFIX: { default: 'meterline', readBy: 'services', meaning: 'BullMQ key prefix' },
  KAFKA_BROKERS: {
    readBy: 'services', shown: 'read from `$METERLINE_DATA_DIR/kafka/bootstrap`', meaning: 'comma-separated `host:port` list',
  },
  KAFKA_CLIENT_ID: { default: 'meterline', readBy: 'services', meaning: 'Kafka client id' },
  KAFKA_EVENTS_TOPIC: { default: 'events', readBy: 'services', meaning: 'topic of ingested events' },
  KAFKA_SYSTEM_EVENTS_TOPIC: { default: 'system_events', readBy: 'services', meaning: 'topic the outbox relay writes system events to' },
  KAFKA_EVENTS_PARTITIONS: {
    default: '16', readBy: 'services',
    meaning: "partitions of the events topic: an event of shard s (of 64) travels in partition s mod this; must equal the topic's, and divide 64 for an even spread",
  },
  AGGREGATOR_CONSUMERS: {
    default: '2', readBy: 'services',
    meaning: 'aggregator consumers of the group a process starts (each holds the shards of its partitions; two overlap one\'s JavaScript with the other\'s inserts on a 2-core machine); change at run time with PUT /v1/admin/aggregators',
  },
  AGGREGATOR_HOT_WINDOW_MINUTES: {
    default: '30', readBy: 'services',
    meaning: "the dedup hot window: an event timestamped this recently (or later) is checked against the keys in the writer's memory alone; an older one, against memory and then `dedup_events` (one lookup per write). Memory holds about this many minutes of keys at 36-71 bytes each (about 52 measured): at 10,000 events/s, 30 minutes is 18 M keys, about 0.9 GB",
  },
  AGGREGATOR_THREAD: {
    default: 'worker', readBy: 'services',
    meaning: "`worker`: a process's aggregator consumers run in a worker thread (their JavaScript off the API's event loop; ClickHouse statements through the main thread's engine); `main`: on its main thread (tests that hook into a write)",
  },
  INGEST_THREAD: {
    default: 'worker', readBy: 'services',
    meaning: "`worker`: ingest's routes, spool and Kafka producer run on their own thread (the main thread authenticates and hands the raw body over; parsing, validation, encoding, the spool and the producer run off the API's event loop); `main`: on the process's main thread. `worker` needs the spool (`SPOOL_ENABLED=true`); without it, and in tests that move the clock, ingest runs on the main thread",
  },
  USAGE_AUDIT_EVERY_MS: {
    default: '60000', readBy: 'services',
    meaning: 'online exactness audit: how often each aggregator recounts sampled closed minutes from the raw events (`meterline_usage_audit_samples_total`); 0 disables',
  },
  USAGE_AUDIT_SAMPLES: { default: '5', readBy: 'services', meaning: 'online exactness audit: closed minutes (meter, customer) recounted per round' },
  KAFKA_GROUP_SYNC_DELAY_MS: {
    default: '1000', shown: '`1000` (compose: `0`)', readBy: 'services',
    meaning: "how long the aggregator group's leader waits before it sends the partition assignment: the local broker (librdkafka's mock) ends a rebalance at the leader's assignment and refuses a member that syncs after it, which then rejoins and starts the rebalance again; 0 with a real Kafka",
  },
  KAFKA_AGGREGATOR_GROUP: { default: 'meterline-aggregator', readBy: 'services', meaning: "the aggregator's consumer group" },
  CLICKHOUSE_URL: { readBy: 'services', shown: 'unset: embedded chDB', meaning: 'a real ClickHouse server (`http(s)://...`)' },
  CLICKHOUSE_USER: { readBy: 'services', shown: 'unset', meaning: 'ClickHouse server user' },
  CLICKHOUSE_PASSWORD: { readBy: 'services', shown: 'unset', meaning: 'ClickHouse server password' },
  CLICKHOUSE_DATABASE: { default: 'meterline', readBy: 'services', meaning: 'ClickHouse database (a plain identifier)' },
  CLICKHOUSE_ENDPOINT_PORT: {
    default: '8123', readBy: 'services',
    meaning: "port of the local ClickHouse endpoint (`npm run up`'s process that owns chDB and serves ClickHouse's HTTP interface; the roles reach it with `CLICKHOUSE_URL`)",
  },
  CLICKHOUSE_ENDPOINT_FAULTS: { default: 'false', readBy: 'services', meaning: '`true`: the local ClickHouse endpoint takes fault rules at `POST /__faults` (tests and `npm run chaos`)' },
  CHDB_CONNECTIONS: { default: '8', readBy: 'services', meaning: 'connections to the embedded chDB engine (statements it runs at once), in-process or behind the local ClickHouse endpoint' },
  CLICKHOUSE_REQUEST_TIMEOUT_MS: { default: '120000', readBy: 'services', meaning: 'how long a statement sent over HTTP (`CLICKHOUSE_URL`) may take before the client gives up on it' },
  CHDB_PATH: { readBy: 'services', shown: '`$METERLINE_DATA_DIR/chdb`', meaning: "the embedded chDB's data directory (bound to one process)" },
  INGEST_FORWARD_URL: {
    readBy: 'services', shown: 'unset',
    meaning: "billing-api forwards the ingest routes (`POST /v1/events`, `/v1/events/bulk`, `/v1/events/raw/bulk`) to this ingest URL, so one base URL serves the whole API; the processes topology sets it to ingest's port",
  },
  INGEST_BODY_LIMIT_BYTES: { default: '10485760', shown: '`10485760` (10 MiB)', readBy: 'services', meaning: 'maximum ingest request body' },
  INGEST_MIN_EVENT_TIME: { default: '2000-01-01T00:00:00Z', readBy: 'services', meaning: 'earliest accepted event `timestamp` (ISO 8601)' },
  INGEST_MAX_EVENT_AGE_DAYS: {
    default: '35', readBy: 'services',
    meaning: 'ingest refuses events whose `timestamp` is older than this many days (400); dedup keys are kept 2 days longer (the dedup horizon), then forgotten; 0: no limit, keys kept forever',
  },
  RETENTION_EVENTS_RAW_DAYS: {
    default: '0', readBy: 'services',
    meaning: "TTL of `events_raw` by event time, in days (0: kept forever); a meter created later backfills only from what is kept",
  },
  RETENTION_METER_EVENTS_DAYS: {
    default: '0', readBy: 'services',
    meaning: 'TTL of `meter_events` by event time, in days (0: kept forever); usage ranges older than it are answered to the minute (their edge minutes read the raw per-event rows), the explain trail lists no events',
  },
  INGEST_MAX_FUTURE_MINUTES: { default: '5', readBy: 'services', meaning: 'how far ahead of the server clock an event `timestamp` may be' },
  HTTP_MAX_URL_BYTES: { default: '8192', readBy: 'services', meaning: 'longer URLs get 414' },
  HTTP_MAX_HEADER_BYTES: { default: '16384', readBy: 'services', meaning: 'request line and headers together; larger gets 431' },
  PG_ACQUIRE_TIMEOUT_MS: { default: '1500', readBy: 'services', meaning: 'how long a request waits for a Postgres connection before it answers 503' },
  PG_CONNECT_TIMEOUT_MS: { default: '1000', readBy: 'services', meaning: 'deadline of one Postgres connect attempt' },
  PG_STATEMENT_TIMEOUT_MS: { default: '30000', readBy: 'services', meaning: "Postgres `statement_timeout` of every connection (the ORM's pool and the aggregator's): a statement running longer is cancelled (503 to a request)" },
  PG_LOCK_TIMEOUT_MS: { default: '5000', readBy: 'services', meaning: 'Postgres `lock_timeout` of every connection: a statement waiting longer for a row or table lock is cancelled (503)' },
  PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: { default: '60000', readBy: 'services', meaning: "Postgres `idle_in_transaction_session_timeout`: a transaction left open without a statement this long is ended by the server (not the aggregator's fence and backfill-lease transactions, which hold their locks across ClickHouse inserts)" },
  PG_NO_ANSWER_MS: {
    default: '700', readBy: 'services',
    meaning: 'a Postgres query without an answer this long makes the watchdog probe Postgres on a fresh connection (platform/postgres-watchdog.ts); 0 disables the watchdog',
  },
  PG_PROBE_TIMEOUT_MS: {
    default: '500', readBy: 'services',
    meaning: 'the watchdog\'s probe (connect + `SELECT 1`) deadline, counted in time this process\'s event loop ran (a loop busy with our own work cannot read an answer): without an answer, Postgres counts as hung, connections with queries in flight are closed and queries fail at once (503) until a probe answers',
  },
  REDIS_COMMAND_TIMEOUT_MS: { default: '1500', readBy: 'services', meaning: 'how long a request waits on Redis (job queues) before it answers 503' },
  INGEST_MAX_PENDING_BYTES: {
    default: '12582912', shown: '`12582912` (12 MiB)', readBy: 'services',
    meaning: "how far the spool's forwarder may send ahead of the aggregator group's commits (`SPOOL_RETAIN_UNTIL=committed`; all-in-one without the spool: ingest answers 429 beyond it); 0 disables",
  },
  INGEST_MAX_PENDING_PARTITION_BYTES: {
    default: '4194304', shown: '`4194304` (4 MiB)', readBy: 'services',
    meaning: 'committed mode: how far the forwarder may send ahead of the aggregator group\'s commits in one partition (the local broker keeps 5 MB per partition); 0 disables',
  },
  SPOOL_ENABLED: { default: 'true', readBy: 'services', meaning: "`false`: no spool, the 202 waits for Kafka's ack and a Kafka failure is a 503" },
  SPOOL_DIR: { readBy: 'services', shown: '`$METERLINE_DATA_DIR/spool`', meaning: "the ingest spool's segments" },
  SPOOL_RETAIN_UNTIL: {
    default: 'committed', shown: '`committed` (compose: `acked`)', readBy: 'services',
    meaning: "a spooled batch is kept until the aggregator group's committed offsets passed it (in-memory broker: ingest reads the group's offsets, so any number of aggregator processes) or until Kafka acknowledged it (durable Kafka)",
  },
  SPOOL_MAX_BYTES: {
    default: '2147483648', shown: '`2147483648` (2 GiB)', readBy: 'services',
    meaning: 'disk bound on the spooled frames (plus one segment zero-filled ahead); beyond it ingest answers 503 with `Retry-After`',
  },
  SPOOL_SEGMENT_BYTES: { default: '16777216', shown: '`16777216` (16 MiB)', readBy: 'services', meaning: 'segment file size (zero-filled ahead of use)' },
  SPOOL_MEMORY_BYTES: {
    default: '67108864', shown: '`67108864` (64 MiB)', readBy: 'services',
    meaning: 'spooled batches held in memory for the forwarder; the rest is read back from disk',
  },
  SPOOL_RESEND_AFTER_MS: {
    default: '60000', readBy: 'services',
    meaning: '`committed`: a batch Kafka acknowledged and the aggregator did not commit within this time, in a partition whose commits stopped as long, is sent again unless the broker still holds it',
  },
  SPOOL_LINGER_MS: {
    default: '250', readBy: 'services',
    meaning: "`committed`: while a partition has records the aggregator has not committed, newly spooled ones for it wait up to this long and then go to Kafka together, in one batch. The local broker hands a consumer one batch per partition per fetch, so many small batches cap what the aggregator reads (docs/benchmarks.md); a partition with nothing outstanding sends at once. 0: no waiting",
  },
  SHUTDOWN_DRAIN_MS: {
    default: '7000', readBy: 'services',
    meaning: 'on SIGTERM, how long the spool may drain into Kafka and the aggregator; then the aggregator finishes the write in progress and the rest stays in the spool (a stop still running 5 s later exits anyway)',
  },
  API_KEY_CACHE_TTL_MS: { default: '30000', readBy: 'services', meaning: 'a revoked key may work this long in another process' },
  FINALIZATION_DELAY_MINUTES: { default: '120', readBy: 'services', meaning: 'invoice finalization delay' },
  BILLING_SCHEDULE_EVERY_MS: { default: '120000', readBy: 'services', meaning: 'subscription billing schedule' },
  BILLING_BATCH_SIZE: { default: '200', readBy: 'services', meaning: 'subscriptions a billing run claims, prices and writes per transaction (set-based: a handful of statements per batch)' },
  BILLING_RUN_CONCURRENCY: { default: '2', readBy: 'services', meaning: 'batches one scheduler process bills at once in a billing run (each claims its own rows with SKIP LOCKED; several processes add up)' },
  SCHEDULER_LOCK_MS: { default: '30000', readBy: 'services', meaning: "lock of a running scheduler job (BullMQ lockDuration, renewed every half of it while the job runs); a job whose lock expired (its process stopped or stalled) is taken as stalled and run again once, and a billing run's second attempt continues the same run record" },
  BILLING_WAIT_FOR_INGESTION: { default: 'true', readBy: 'services', meaning: "`true`: a period is billed only once the ingestion watermark (every event acknowledged before it is counted) has passed the period's end (README, \"Billing day\")" },
  BILLING_WATERMARK_WAIT_MS: { default: '5000', readBy: 'services', meaning: "how long a billing run waits for the ingestion watermark to pass periods the clock says have ended (the rest waits for a later run)" },
  BILLING_WATERMARK_GRACE_MS: { default: '0', readBy: 'services', meaning: 'subtracted from the ingestion watermark: acknowledgements the scheduler process cannot see (a spool of a separate ingest process)' },
  USAGE_ALERTS_EVERY_MS: { default: '60000', readBy: 'services', meaning: "how often the `usage-alerts` job compares feature usage with the features' alert thresholds" },
  LIVE_CACHE_MAX_CUSTOMERS: { default: '200000', readBy: 'services', meaning: 'customers (record, subscriptions, add-ons, wallets) one API process keeps for the live check; least recently used go first' },
  LIVE_COUNTERS_MAX: { default: '1000000', readBy: 'services', meaning: 'live usage counters (meter x customer x reset period) one API process keeps; least recently used go first and are read again from the buckets' },
  LIVE_COUNTER_SCOPE_LOAD: { default: 'true', readBy: 'services', meaning: "`true`: once a second customer misses a counter of the same (meter, reset period), the counters of every customer of that meter and period are read in one ClickHouse statement and held (customers without usage as zero); `false`: each counter is read alone" },
  LIVE_HEARTBEAT_MS: { default: '100', readBy: 'services', meaning: "how often the aggregator's process publishes usage_as_of when it writes nothing (bounds the staleness it reports)" },
  LIVE_SPEND_CAP_CONCURRENCY: { default: '4', readBy: 'services', meaning: 'customers whose spend caps one API process evaluates at a time after committed writes' },
  USAGE_EXPORT_PAGE_SIZE: { default: '1000', readBy: 'services', meaning: 'customers read per page by the streamed usage analytics export (memory holds one page)' },
  WEBHOOK_TIMEOUT_MS: { default: '10000', readBy: 'services', meaning: 'deadline of one webhook delivery attempt' },
  WEBHOOK_MAX_ATTEMPTS: { default: '5', readBy: 'services', meaning: 'delivery attempts of a webhook before it is marked failed' },
  WEBHOOK_BACKOFF_MS: { default: '1000', readBy: 'services', meaning: 'first retry delay of a webhook delivery (doubles per attempt)' },
  WEBHOOK_WORKER_CONCURRENCY: { default: '10', readBy: 'services', meaning: 'parallel webhook deliveries of one scheduler process (at least 2)' },
  WEBHOOK_ENDPOINT_CONCURRENCY: { default: '2', readBy: 'services', meaning: 'in-flight deliveries per endpoint across processes; must not exceed WEBHOOK_TENANT_CONCURRENCY' },
  WEBHOOK_TENANT_CONCURRENCY: { default: '4', readBy: 'services', meaning: 'in-flight deliveries per tenant across processes; must be below WEBHOOK_WORKER_CONCURRENCY, so one tenant never holds every slot' },
  WEBHOOK_CIRCUIT_FAILURES: { default: '5', readBy: 'services', meaning: "consecutive failed attempts that open an endpoint's circuit (deliveries wait, unspent, until a probe succeeds); 0 never opens it" },
  WEBHOOK_CIRCUIT_COOLDOWN_MS: { default: '30000', readBy: 'services', meaning: 'how long an open circuit waits before one probe delivery' },
  INTEGRATIONS_ENCRYPTION_KEY: {
    readBy: 'services', shown: 'a fixed development key; **required** with `NODE_ENV=production`',
    meaning: '32 bytes (hex or base64) encrypting provider credentials and webhook signing secrets at rest (AES-256-GCM)',
  },
  INTEGRATIONS_ENCRYPTION_KEY_PREVIOUS: {
    readBy: 'services', shown: 'unset',
    meaning: 'during a key rotation only: the key being replaced, still accepted for reading (README, "Security")',
  },
  API_KEY_HASH_SECRET: {
    readBy: 'services', shown: 'a fixed development key; **required** with `NODE_ENV=production`',
    meaning: '32 bytes (hex or base64): the HMAC-SHA256 key of stored API key hashes',
  },
  API_KEY_HASH_SECRET_PREVIOUS: {
    readBy: 'services', shown: 'unset',
    meaning: 'during a rotation only: the hash secret being replaced; keys under it still work and are re-hashed on use',
  },
  OUTBOUND_URL_ALLOW: {
    readBy: 'services', shown: 'empty (tests: `127.0.0.1`)',
    meaning: 'comma-separated destinations exempt from the SSRF guard on tenant-supplied URLs: `host`, `host:port`, an IP (`127.0.0.1`, `[::1]:9000`) or a CIDR range (`10.1.0.0/16`)',
  },
  HTTP_TRUST_PROXY: {
    default: 'false', readBy: 'services',
    meaning: 'whose address the abuse limits count: `false` the TCP peer; `true` the left-most `X-Forwarded-For` entry; a number, the entry that many proxies back; or comma-separated proxy addresses/CIDRs to trust (fastify `trustProxy`)',
  },
  AUTH_FAILURE_LIMIT: {
    default: '20', readBy: 'services',
    meaning: 'failed authentications (unknown or expired API key) per source address and window; then every request with an API key from that address is 429 until the window ends, valid key or not; 0 = no limit',
  },
  AUTH_FAILURE_WINDOW_SECONDS: { default: '300', readBy: 'services', meaning: 'window of `AUTH_FAILURE_LIMIT`, from the first failure' },
  SIGNUP_LIMIT: { default: '5', readBy: 'services', meaning: '`POST /v1/signup` calls per source address and window (then 429); 0 = no limit' },
  SIGNUP_WINDOW_SECONDS: { default: '3600', readBy: 'services', meaning: 'window of `SIGNUP_LIMIT`' },
  INBOUND_WEBHOOK_LIMIT: {
    default: '1200', readBy: 'services',
    meaning: 'inbound provider webhooks (`POST /webhooks/<provider>/<tenant>/<environment>`) per connection (that path) and window, then 429 (providers retry); 0 = no limit',
  },
  INBOUND_WEBHOOK_FAILURE_LIMIT: {
    default: '30', readBy: 'services',
    meaning: 'inbound webhooks refused (bad signature, unknown connection) per source address and window; then every inbound webhook from that address is 429 until the window ends; 0 = no limit',
  },
  INBOUND_WEBHOOK_WINDOW_SECONDS: { default: '60', readBy: 'services', meaning: 'window of `INBOUND_WEBHOOK_LIMIT` and `INBOUND_WEBHOOK_FAILURE_LIMIT`' },
  RATE_LIMIT_WINDOW_SECONDS: { default: '60', readBy: 'services', meaning: 'window of the request rate limits' },
  RATE_LIMIT_PER_KEY: {
    default: '60000', readBy: 'services',
    meaning: "requests per window per API key, billing API and ingest together; 0 = no limit; a tenant's own limit overrides it",
  },
  RATE_LIMIT_PER_TENANT: {
    default: '120000', readBy: 'services',
    meaning: "requests per window per tenant, billing API and ingest together; 0 = no limit; a tenant's own limit overrides it",
  },
  STRIPE_API_BASE: {
    default: 'https://api.stripe.com', readBy: 'services',
    meaning: 'where the Stripe adapter sends requests (tests point it at a local stand-in)',
  },
  INTEGRATION_EVENTS_RATE_LIMIT_PER_SECOND: { default: '10', readBy: 'services', meaning: 'per-tenant rate of background provider syncs (`integration_events`)' },
  METRICS_TENANT_ALLOWLIST: {
    readBy: 'services', shown: 'empty',
    meaning: 'comma-separated tenant ids that per-tenant metrics label by id (README, "Metrics, dashboards and alert rules")',
  },
  METRICS_TENANT_BUCKETS: { default: '8', readBy: 'services', meaning: 'every other tenant is hashed into this many metric labels `other_00`..; 0: one label `other`' },
  METRICS_METERS_PER_TENANT: {
    default: '20', readBy: 'services',
    meaning: "meters labelled by id per allow-listed tenant and process; later ones, and other tenants' meters, are `other`",
  },
  PAYMENT_RETRY_SCHEDULE: {
    default: '1d,3d,5d', readBy: 'services',
    meaning: 'dunning: the delay of the retry after the 1st, 2nd, ... failed payment attempt of an invoice (units `ms`, `s`, `m`, `h`, `d`); none after the last; `none`: no retries',
  },
  ADMIN_TOKEN: {
    readBy: 'services', shown: 'unset: admin API off (`npm run up` generates one)',
    meaning: 'bearer token of the operator API `/v1/admin` (at least 24 characters); the CLI `npm run admin` sends it too',
  },
  PRICING_PARSER: {
    default: 'deterministic', readBy: 'services',
    meaning: 'who reads `POST /v1/ai/pricing/parse` descriptions: the built-in rule-based reader, or `openai` (an OpenAI-compatible chat completions endpoint, its answer checked against the same schema, falling back to the rule-based reader when it fails)',
  },
  PRICING_LLM_URL: { default: 'https://api.openai.com/v1', readBy: 'services', meaning: '`PRICING_PARSER=openai`: the endpoint\'s base URL' },
  PRICING_LLM_MODEL: { default: 'gpt-4o-mini', readBy: 'services', meaning: '`PRICING_PARSER=openai`: the model' },
  PRICING_LLM_API_KEY: { readBy: 'services', shown: 'unset; **required** with `PRICING_PARSER=openai`', meaning: 'bearer token for that endpoint' },
  PRICING_LLM_TIMEOUT_MS: { default: '15000', readBy: 'services', meaning: 'how long a parse waits for the model before falling back' },
  AUTH_JWT_SECRET: {
    readBy: 'services', shown: 'unset: bearer tokens are refused',
    meaning: 'at least 32 bytes; HS256 secret of the JWTs (`Authorization: Bearer`) whose `environment_id` claim selects the environment (API basics)',
  },
  SIGNUP_ENABLED: {
    default: 'false', readBy: 'services',
    meaning: '`true`: `POST /v1/signup` creates a tenant, its first user and API key without an API key (limited per address by `SIGNUP_LIMIT`)',
  },
  // the operators' CLI: scripts/admin.ts, job:run, tenant:create
  METERLINE_API_URL: {
    readBy: 'CLI', shown: '`http://127.0.0.1:$PORT`',
    meaning: 'where `npm run admin` finds the platform; set, the CLI never falls back to offline mode',
  },
  // scripts/*.sh
  KAFKA_PORT: { default: '19092', readBy: 'stack scripts', meaning: 'fixed port of the local Kafka-protocol broker' },
  PROMETHEUS_PORT: { default: '19090', readBy: 'stack scripts', meaning: '`npm run up`: port of the local Prometheus (http://127.0.0.1:19090) scraping the platform with the alert rules; data in `$METERLINE_DATA_DIR/prometheus`; 0: none' },
  STACK_MODE: { default: 'dev', readBy: 'stack scripts', meaning: '`test`: Postgres without fsync and Redis without persistence (what `npm test` uses)' },
  PG_DB_NAMES: { default: 'meterline meterline_test', readBy: 'stack scripts', meaning: 'databases `scripts/stack.sh` creates' },
  TEST_CONCURRENCY: { default: '2', readBy: 'stack scripts', meaning: 'test files `npm test` runs at once' },
  // tests
  TEST_LOG_LEVEL: { shown: '`fatal` (fault suite: `warn`)', readBy: 'tests', meaning: 'log level of the platforms tests start' },
  PROPERTY_SEED: { shown: 'random', readBy: 'tests', meaning: 'replays a run of the meter-usage property test' },
  SNAPSHOT_PROMETHEUS_PORT: { default: '19494', readBy: 'tests', meaning: 'port of the local Prometheus that `npm run dashboards:snapshot` starts' },
  FAULT_EVENTS: { default: '40000', readBy: 'tests', meaning: 'events per scenario of the local-platform fault suite' },
  CHAOS_SEED: {
    default: '213', shown: '`213` (`1808` with `CHAOS_TOPOLOGY=processes`)', readBy: 'tests',
    meaning: 'the seed of the bounded chaos run in `npm test` (test/chaos/; `npm run chaos -- --seed N` for the long runs)',
  },
  CHAOS_TOPOLOGY: { default: 'all-in-one', readBy: 'tests', meaning: 'the topology of the bounded chaos run in `npm test` (`processes`: its 11 kinds of faults, about 6 minutes)' },
  FUZZ_RUNS: { default: '200', readBy: 'tests', meaning: '`npm run fuzz`: requests per operation' },
  FUZZ_SEED: { shown: 'random (printed)', readBy: 'tests', meaning: '`npm run fuzz`: the seed' },
  // bench/
  EVENTS: { shown: '500000 (`bench:ingest`), 200000 (`bench:aggregator`)', readBy: 'benchmarks', meaning: 'events a benchmark sends' },
  HORIZON_KEYS: { default: '200000000', readBy: 'benchmarks', meaning: '`bench:horizon`: dedup keys seeded over 37 event days (a quarter first, then the rest)' },
  HORIZON_RATE: { default: '10000', readBy: 'benchmarks', meaning: '`bench:horizon`: events per second of its steady part (and the hot window seeded: rate x window)' },
  HORIZON_SECONDS: { default: '600', readBy: 'benchmarks', meaning: '`bench:horizon`: seconds of its steady part (at least twice the window)' },
  HORIZON_GRANULARITIES: { readBy: 'benchmarks', shown: 'unset', meaning: '`bench:horizon`: comma-separated index granularities (e.g. `64,128`): copies of `dedup_events` built with them, and an empty one, whose lookups are timed beside the table\'s own; empty: none' },
  HORIZON_MERGE_WAIT_S: { default: '300', readBy: 'benchmarks', meaning: '`bench:horizon`: how long it lets background merges of the seeded keys run before it measures lookups again' },
  WRITERS: { default: '1', readBy: 'benchmarks', meaning: '`bench:aggregator`: aggregator consumers of one group in the bench process' },
  BATCH: { default: '1000', readBy: 'benchmarks', meaning: 'events per ingest request' },
  CONCURRENCY: { default: '8', readBy: 'benchmarks', meaning: 'ingest requests in flight' },
  BACKLOG: { default: '1000000', readBy: 'benchmarks', meaning: '`bench:drain`: events sent before `npm run down`' },
  BENCH_PORT: { default: '18080', readBy: 'benchmarks', meaning: "`bench:ingest`, `bench:steady`, `bench:entitlement-check --topology processes`: the platform's port" },
  BENCH_SPOOL: { default: 'both', readBy: 'benchmarks', meaning: '`bench:ingest`: `both`, `on` or `off` (runs with and without the spool)' },
  BENCH_ROUNDS: { default: '1', readBy: 'benchmarks', meaning: '`bench:ingest`: rounds per mode' },
  BENCH_NODE_ARGS: { shown: 'none', readBy: 'benchmarks', meaning: "`bench:ingest`: extra node arguments of the platform's process" },
} as const satisfies Record<string, Setting>

export type SettingName = keyof typeof SETTINGS

/** The list's default of a setting; `undefined` when it is computed by its reader or has none. */
export function settingDefault(name: SettingName): string | undefined {
  const s: Setting = SETTINGS[name]
  return s.default
}

const escapeCell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')

/** The README's configuration table, one row per setting in list order. */
export function renderSettingsTable(settings: Record<string, Setting> = SETTINGS): string {
  const rows = Object.entries(settings).map(([name, s]) => {
    const shown = s.shown ?? (s.default === undefined ? 'unset' : `\`${s.default}\``)
    return `| \`${name}\` | ${escapeCell(shown)} | ${s.readBy} | ${escapeCell(s.meaning)} |`
  })
  return ['| Variable | Default | Read by | Meaning |', '|---|---|---|---|', ...rows].join('\n')
}

export const README_TABLE_START = '<!-- settings-table:start (generated by npm run docs:config from platform/settings.ts) -->'
export const README_TABLE_END = '<!-- settings-table:end -->'

/** `readme` with the text between the markers replaced by the table. */
export function replaceSettingsTable(readme: string, table: string): string {
  const start = readme.indexOf(README_TABLE_START)
  const end = readme.indexOf(README_TABLE_END)
  if (start < 0 || end < start) throw new Error(`the README has no ${README_TABLE_START} ... ${README_TABLE_END} markers`)
  return `${readme.slice(0, start + README_TABLE_START.length)}\n${table}\n${readme.slice(end)}`
}
