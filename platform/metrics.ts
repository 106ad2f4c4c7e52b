// Prometheus metrics (prom-client) shared by all services. Names are the contract with
// grafana/dashboards/meterline.json.
import client from 'prom-client'
import { getHeapStatistics } from 'node:v8'
import { isMainThread, workerData } from 'node:worker_threads'

export const registry = new client.Registry()
// Process-wide figures (CPU, RSS, handles, event-loop lag) come from the main thread only: a
// worker thread's series join /metrics summed per label set, which would count them once a thread.
if (isMainThread) client.collectDefaultMetrics({ register: registry })

const threadName = isMainThread ? 'main' : String((workerData as { threadName?: string } | null)?.threadName ?? 'worker')

// Registered in `registry`: its collect() reads the heap at each scrape (nothing else refers to it).
new client.Gauge({
  name: 'meterline_thread_heap_bytes',
  help: 'V8 heap of each thread of the process (kind: used, total, external); nodejs_heap_* are the main thread only',
  labelNames: ['thread', 'kind'],
  registers: [registry],
  collect() {
    const h = getHeapStatistics()
    this.set({ thread: threadName, kind: 'used' }, h.used_heap_size)
    this.set({ thread: threadName, kind: 'total' }, h.total_heap_size)
    this.set({ thread: threadName, kind: 'external' }, h.external_memory)
  },
})

type MetricsJson = Awaited<ReturnType<typeof registry.getMetricsAsJSON>>
/** Other threads of this process (the aggregator worker): their series join this registry's in /metrics. */
const threadSources = new Set<() => Promise<MetricsJson>>()
export function addThreadMetrics(source: () => Promise<MetricsJson>): () => void {
  threadSources.add(source)
  return () => threadSources.delete(source)
}

/** The exposition text of /metrics: this thread's registry plus every other thread's series (summed per label set). */
export async function metricsText(): Promise<string> {
  if (threadSources.size === 0) return registry.metrics()
  const others = await Promise.all([...threadSources].map((f) => f().catch(() => [] as MetricsJson)))
  return client.AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), ...others]).metrics()
}

const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export const httpRequestSeconds = new client.Histogram({
  name: 'meterline_http_request_duration_seconds',
  help: 'HTTP request latency',
  labelNames: ['service', 'method', 'route', 'status_code'],
  buckets: latencyBuckets,
  registers: [registry],
})

export const ingestEventsAccepted = new client.Counter({
  name: 'meterline_ingest_events_accepted_total',
  help: 'Events accepted by ingest (acknowledged by Kafka)',
  registers: [registry],
})

export const ingestEventsRejected = new client.Counter({
  name: 'meterline_ingest_events_rejected_total',
  help: 'Events rejected by ingest',
  labelNames: ['reason'],
  registers: [registry],
})

export const ingestBackpressure = new client.Counter({
  name: 'meterline_ingest_backpressure_total',
  help: 'Ingest requests refused with 429 because aggregation is behind (all-in-one only)',
  registers: [registry],
})

export const kafkaProduceSeconds = new client.Histogram({
  name: 'meterline_kafka_produce_duration_seconds',
  help: 'Time until Kafka acknowledged a produce request (acks=all)',
  buckets: latencyBuckets,
  registers: [registry],
})

export const kafkaRequestTimeouts = new client.Counter({
  name: 'meterline_kafka_request_timeouts_total',
  help: 'Kafka requests that got no answer within the request timeout (kafkajs retries them; each is a stall of that length)',
  labelNames: ['client', 'api'],
  registers: [registry],
})

export const aggregatorEventsConsumed = new client.Counter({
  name: 'meterline_aggregator_events_consumed_total',
  help: 'Events decoded by the aggregator',
  registers: [registry],
})

export const aggregatorMeterRowsWritten = new client.Counter({
  name: 'meterline_aggregator_meter_rows_written_total',
  help: 'Meter event rows written to ClickHouse (each also folded into a bucket)',
  registers: [registry],
})

export const aggregatorWriteStepSeconds = new client.Histogram({
  name: 'meterline_aggregator_write_step_seconds',
  help: "One write's time by step: prepare (meters, shards, cuts, dedup, rows), fence (the shards' epochs held), insert (raw and meter-event rows, then the bucket block), keys (dedup keys), done (the done mark, the fence's commit)",
  labelNames: ['step'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10],
  registers: [registry],
})

export const aggregatorFetchHeldSeconds = new client.Histogram({
  name: 'meterline_aggregator_fetch_held_seconds',
  help: "How long a fetched batch's handler waited for its partition's earlier writes (LOOKAHEAD pieces in flight): the consumer fetches no partition meanwhile",
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30],
  registers: [registry],
})

export const aggregatorDuplicateEvents = new client.Counter({
  name: 'meterline_aggregator_duplicate_events_total',
  help: 'Events dropped because their event_id was already counted (client resends, replays)',
  registers: [registry],
})

export const aggregatorBackfillFailures = new client.Counter({
  name: 'meterline_aggregator_backfill_failures_total',
  help: 'Meter backfills that failed and will be retried',
  registers: [registry],
})

export const aggregatorColdKeys = new client.Counter({
  name: 'meterline_aggregator_dedup_cold_keys_total',
  help: 'Events older than the hot window that memory did not hold, checked in dedup_events (result: counted_before, a duplicate; new)',
  labelNames: ['result'],
  registers: [registry],
})

export const aggregatorShardLoadFailures = new client.Counter({
  name: 'meterline_aggregator_shard_load_failures_total',
  help: "Takeovers whose shard's dedup keys could not be loaded (reason: truncated, corrupt, error); the shard is not held and the takeover is retried",
  labelNames: ['reason'],
  registers: [registry],
})

export const aggregatorEventsSkipped = new client.Counter({
  name: 'meterline_aggregator_events_skipped_total',
  help: 'Events not counted: a meter matched but could not take a value from them, or (reason expired) older than the dedup horizon',
  labelNames: ['reason'],
  registers: [registry],
})

export const aggregatorConsumerLag = new client.Gauge({
  name: 'meterline_aggregator_consumer_lag',
  help: 'High watermark minus the last processed offset, per partition',
  labelNames: ['topic', 'partition'],
  registers: [registry],
})

export const clickhouseInsertSeconds = new client.Histogram({
  name: 'meterline_clickhouse_insert_duration_seconds',
  help: 'ClickHouse insert latency',
  labelNames: ['table'],
  buckets: latencyBuckets,
  registers: [registry],
})

export const schedulerJobRuns = new client.Counter({
  name: 'meterline_scheduler_job_runs_total',
  help: 'Scheduled job runs',
  labelNames: ['job_name', 'outcome'],
  registers: [registry],
})

export const schedulerJobSeconds = new client.Histogram({
  name: 'meterline_scheduler_job_duration_seconds',
  help: 'Scheduled job run duration',
  labelNames: ['job_name'],
  buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
  registers: [registry],
})

export const schedulerJobItems = new client.Counter({
  name: 'meterline_scheduler_job_items_total',
  help: 'Items processed by scheduled jobs',
  labelNames: ['job_name'],
  registers: [registry],
})

export const spoolBytes = new client.Gauge({
  name: 'meterline_spool_bytes',
  help: 'Bytes of the ingest spool on disk (batches not yet safe, and their segments)',
  registers: [registry],
})

export const spoolOldestUnforwardedSeconds = new client.Gauge({
  name: 'meterline_spool_oldest_unforwarded_age_seconds',
  help: 'Age of the oldest spooled batch not yet acknowledged by Kafka (0 when none)',
  registers: [registry],
})

export const spoolReplayedBatches = new client.Counter({
  name: 'meterline_spool_replayed_batches_total',
  help: 'Spooled batches sent again: found not yet safe at start, or lost by a restarted broker',
  labelNames: ['reason'],
  registers: [registry],
})

export const spoolForwardFailures = new client.Counter({
  name: 'meterline_spool_forward_failures_total',
  help: 'Sends of spooled batches to Kafka that failed and are retried',
  registers: [registry],
})

export const spoolFlushSeconds = new client.Histogram({
  name: 'meterline_spool_flush_duration_seconds',
  help: 'One group commit of the ingest spool: write and fdatasync',
  buckets: latencyBuckets,
  registers: [registry],
})

export const spoolAppends = new client.Counter({
  name: 'meterline_spool_appends_total',
  help: 'Requests appended to the ingest spool (appends per flush = this / the flush count)',
  registers: [registry],
})

export const dependencyUnavailable = new client.Counter({
  name: 'meterline_dependency_unavailable_total',
  help: 'Requests answered 503 because a dependency (postgres, redis) was unreachable',
  labelNames: ['dependency'],
  registers: [registry],
})

export const backgroundFailures = new client.Counter({
  name: 'meterline_background_failures_total',
  help: 'Failures of best-effort steps that do not fail their request or job (logged with context)',
  labelNames: ['operation'],
  registers: [registry],
})

export const requestsRateLimited = new client.Counter({
  name: 'meterline_requests_rate_limited_total',
  help: 'Requests answered 429 by the per-key or per-tenant request rate limit',
  labelNames: ['limit'],
  registers: [registry],
})

export const abuseLimited = new client.Counter({
  name: 'meterline_abuse_limited_total',
  help: 'Requests answered 429 by an abuse limit (failed authentications or signups per address, inbound webhooks per connection or failures per address)',
  labelNames: ['limit'],
  registers: [registry],
})

export const authFailures = new client.Counter({
  name: 'meterline_auth_failures_total',
  help: 'Requests with an unknown or expired API key',
  registers: [registry],
})

export const rateLimitUnchecked = new client.Counter({
  name: 'meterline_rate_limit_unchecked_total',
  help: 'Requests let through without a rate-limit check because Redis did not answer',
  registers: [registry],
})

export const outboundUrlRefused = new client.Counter({
  name: 'meterline_outbound_url_refused_total',
  help: 'Calls to tenant-supplied URLs refused by the SSRF guard at call time',
  registers: [registry],
})

// Webhook deliveries. Labels stay bounded on purpose: no tenant id, endpoint id or URL (one
// series per tenant or endpoint would grow without limit); the per-delivery detail is in
// webhook_attempts and GET /v1/webhooks/deliveries.
export const webhookDeliveries = new client.Counter({
  name: 'meterline_webhook_deliveries_total',
  help: 'Webhook delivery steps: success, failed (attempts exhausted), retried (an attempt failed, retried with backoff), circuit_open and concurrency_limited (postponed without an attempt), cancelled (its endpoint was deleted or disabled: ended without an attempt)',
  labelNames: ['outcome'],
  registers: [registry],
})

export const webhookDeliverySeconds = new client.Histogram({
  name: 'meterline_webhook_delivery_latency_seconds',
  help: 'From enqueueing a webhook delivery to its successful attempt (waiting, retries and postponements included)',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600],
  registers: [registry],
})

export const webhookAttemptSeconds = new client.Histogram({
  name: 'meterline_webhook_attempt_duration_seconds',
  help: 'One webhook delivery attempt: the signed POST and recording it',
  labelNames: ['outcome'],
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
})

export const webhookCircuitTransitions = new client.Counter({
  name: 'meterline_webhook_circuit_transitions_total',
  help: 'Endpoint circuits opened (consecutive failures) and closed (a successful probe)',
  labelNames: ['to'],
  registers: [registry],
})

/** One batch of a billing run (claim, usage read, pricing, writes, commit): quantiles in-process (bench:billing-day). */
export const billingBatchSeconds = new client.Summary({
  name: 'meterline_billing_batch_seconds',
  help: 'Duration of one billing-run batch (claim to commit)',
  percentiles: [0.5, 0.99],
  maxAgeSeconds: 3600,
  ageBuckets: 1,
  registers: [registry],
})
