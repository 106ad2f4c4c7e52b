// The provisioned dashboards (grafana/dashboards/*.json are generated from this file:
// `npm run dashboards:build`). Metric names are those of platform/metrics.ts and
// platform/business-metrics.ts.
import { dashboard, row, stat, ts, type DashboardSpec } from './panels.js'

const R = '$__rate_interval'

const http5xxRatio = `(sum(rate(meterline_http_request_duration_seconds_count{status_code=~"5.."}[${R}])) or vector(0)) / clamp_min(sum(rate(meterline_http_request_duration_seconds_count[${R}])), 1e-9)`
/** Attempts that failed (retried, or failed for good) among all attempts; postponements are not attempts. */
const webhookFailureRatio = `(sum(rate(meterline_webhook_deliveries_total{outcome=~"failed|retried"}[${R}])) or vector(0)) / clamp_min(sum(rate(meterline_webhook_deliveries_total{outcome=~"success|failed|retried"}[${R}])), 1e-9)`

/** Failed scheduled runs and failed queue jobs; 0, not "no data", while nothing failed. */
const jobFailures = (range: string) =>
  `(sum(increase(meterline_scheduler_job_runs_total{outcome="failure"}[${range}])) or vector(0)) + (sum(increase(meterline_queue_job_failures_total[${range}])) or vector(0))`

const overview: DashboardSpec = {
  uid: 'meterline-at-a-glance',
  title: 'Meterline overview',
  description: 'Is Meterline healthy? Ingestion, aggregation, billing and webhooks at a glance; details in the other Meterline dashboards.',
  tags: ['meterline'],
  panels: [
    stat('Events accepted /s', `sum(rate(meterline_ingest_events_accepted_total[${R}]))`, 'ops'),
    stat('Events rejected /s', `sum(rate(meterline_ingest_events_rejected_total[${R}]))`, 'ops', { red: 10 }),
    stat('Aggregation lag', 'max(meterline_aggregator_lag_seconds)', 's', { red: 300 }),
    stat('Usage freshness p99', `histogram_quantile(0.99, sum by (le) (rate(meterline_usage_freshness_seconds_bucket[${R}])))`, 's', { red: 60 }),
    stat('HTTP 5xx ratio', http5xxRatio, 'percentunit', { red: 0.05 }),
    stat('Webhook failure ratio', webhookFailureRatio, 'percentunit', { red: 0.2 }),
    stat('Invoices finalized (24 h)', 'sum(increase(meterline_invoices_total{event="finalized"}[24h]))', 'short'),
    stat('Job failures (1 h)', jobFailures('1h'), 'short', { red: 1 }),
    stat('Spool on disk', 'sum(meterline_spool_bytes)', 'bytes', { red: 1.5 * 1024 ** 3 }),
    stat('Oldest unforwarded batch', 'max(meterline_spool_oldest_unforwarded_age_seconds)', 's', { red: 300 }),
    stat('Aggregation lag (events)', 'sum(meterline_aggregator_lag_events)', 'short', { red: 1e6 }),
    stat('503s (dependency down) /s', `sum(rate(meterline_dependency_unavailable_total[${R}])) or vector(0)`, 'ops', { red: 1 }),
    ts('Events /s: accepted and rejected', [
      { expr: `sum(rate(meterline_ingest_events_accepted_total[${R}]))`, legend: 'accepted' },
      { expr: `sum by (reason) (rate(meterline_ingest_events_rejected_total[${R}]))`, legend: 'rejected: {{reason}}' },
      { expr: `sum(rate(meterline_aggregator_events_consumed_total[${R}]))`, legend: 'aggregated' },
    ], 'ops'),
    ts('Aggregation lag and freshness', [
      { expr: 'max by (topic) (meterline_aggregator_lag_seconds)', legend: 'lag {{topic}}' },
      { expr: `histogram_quantile(0.99, sum by (le) (rate(meterline_usage_freshness_seconds_bucket[${R}])))`, legend: 'freshness p99' },
    ], 's'),
    ts('HTTP requests /s by status', [{ expr: `sum by (status_code) (rate(meterline_http_request_duration_seconds_count[${R}]))`, legend: '{{status_code}}' }], 'reqps'),
    ts('Invoices per hour', [{ expr: 'sum by (event) (increase(meterline_invoices_total[1h]))', legend: '{{event}}' }], 'short'),
    ts('Invoiced per hour (minor units)', [{ expr: 'sum by (currency) (increase(meterline_invoiced_amount_minor_total[1h]))', legend: '{{currency}}' }], 'short'),
    ts('Webhook delivery steps /s', [{ expr: `sum by (outcome) (rate(meterline_webhook_deliveries_total[${R}]))`, legend: '{{outcome}}' }], 'ops'),
  ],
}

const ingestion: DashboardSpec = {
  uid: 'meterline-ingestion',
  title: 'Meterline ingestion',
  description: 'From the ingest API to usage in ClickHouse: acceptance per tenant and meter (bounded labels: allow-listed tenants by id, the rest in hashed other_NN buckets), the spool, Kafka, aggregation lag and freshness.',
  tags: ['meterline'],
  panels: [
    row('Ingest'),
    ts('Events accepted /s', [{ expr: `sum(rate(meterline_ingest_events_accepted_total[${R}]))`, legend: 'accepted' }], 'ops'),
    ts('Events rejected /s by reason', [{ expr: `sum by (reason) (rate(meterline_ingest_events_rejected_total[${R}]))`, legend: '{{reason}}' }], 'ops'),
    ts('Requests refused with 429 /s', [{ expr: `sum(rate(meterline_ingest_backpressure_total[${R}]))`, legend: '429' }], 'reqps'),
    row('Per tenant and meter'),
    ts('Accepted /s, top 10 tenants', [{ expr: `topk(10, sum by (tenant) (rate(meterline_tenant_events_total{outcome="accepted"}[${R}])))`, legend: '{{tenant}}' }], 'ops', { width: 12 }),
    ts('Rejected /s, top 10 tenants', [{ expr: `topk(10, sum by (tenant) (rate(meterline_tenant_events_total{outcome="rejected"}[${R}])))`, legend: '{{tenant}}' }], 'ops', { width: 12 }),
    ts('Counted into meters /s, top 10', [{ expr: `topk(10, sum by (tenant, meter) (rate(meterline_meter_events_total[${R}])))`, legend: '{{tenant}} / {{meter}}' }], 'ops', { width: 12 }),
    ts('Events skipped by meters /s', [{ expr: `sum by (reason) (rate(meterline_aggregator_events_skipped_total[${R}]))`, legend: '{{reason}}' }], 'ops', { width: 12 }),
    row('Spool and Kafka'),
    ts('Spool on disk', [{ expr: 'sum by (job) (meterline_spool_bytes)', legend: '{{job}}' }], 'bytes'),
    ts('Oldest batch not yet forwarded', [{ expr: 'max by (job) (meterline_spool_oldest_unforwarded_age_seconds)', legend: '{{job}}' }], 's'),
    ts('Kafka produce latency', [
      { expr: `histogram_quantile(0.5, sum by (le) (rate(meterline_kafka_produce_duration_seconds_bucket[${R}])))`, legend: 'p50' },
      { expr: `histogram_quantile(0.99, sum by (le) (rate(meterline_kafka_produce_duration_seconds_bucket[${R}])))`, legend: 'p99' },
    ], 's'),
    ts('Spool replays and forward failures /s', [
      { expr: `sum by (reason) (rate(meterline_spool_replayed_batches_total[${R}]))`, legend: 'replayed: {{reason}}' },
      { expr: `sum(rate(meterline_spool_forward_failures_total[${R}]))`, legend: 'forward failures' },
    ], 'ops', { width: 12 }),
    ts('Spool group commit p99', [{ expr: `histogram_quantile(0.99, sum by (le) (rate(meterline_spool_flush_duration_seconds_bucket[${R}])))`, legend: 'p99' }], 's', { width: 12 }),
    row('Aggregation'),
    ts('Lag in events (estimated) by partition', [{ expr: 'sum by (topic, partition) (meterline_aggregator_lag_events)', legend: '{{topic}}[{{partition}}]' }], 'short'),
    ts('Lag in seconds by partition', [{ expr: 'max by (topic, partition) (meterline_aggregator_lag_seconds)', legend: '{{topic}}[{{partition}}]' }], 's'),
    ts('Usage freshness (accepted to counted)', [
      { expr: `histogram_quantile(0.5, sum by (le) (rate(meterline_usage_freshness_seconds_bucket[${R}])))`, legend: 'p50' },
      { expr: `histogram_quantile(0.99, sum by (le) (rate(meterline_usage_freshness_seconds_bucket[${R}])))`, legend: 'p99' },
    ], 's'),
    ts('Freshness p99 by stage (spool, broker, queue, write, commit)', [
      { expr: `histogram_quantile(0.99, sum by (le, stage) (rate(meterline_write_path_stage_seconds_bucket[${R}])))`, legend: '{{stage}}' },
    ], 's'),
    ts('Write steps p99 (prepare, fence, insert, keys, done)', [
      { expr: `histogram_quantile(0.99, sum by (le, step) (rate(meterline_aggregator_write_step_seconds_bucket[${R}])))`, legend: '{{step}}' },
    ], 's'),
    ts('Fetches held by writes (share of time) and Kafka request timeouts /s', [
      { expr: `sum(rate(meterline_aggregator_fetch_held_seconds_sum[${R}]))`, legend: 'held' },
      { expr: `sum by (client, api) (rate(meterline_kafka_request_timeouts_total[${R}]))`, legend: 'timeout {{client}} {{api}}' },
    ], 'short'),
    ts('Events aggregated and duplicates dropped /s', [
      { expr: `sum(rate(meterline_aggregator_events_consumed_total[${R}]))`, legend: 'consumed' },
      { expr: `sum(rate(meterline_aggregator_duplicate_events_total[${R}]))`, legend: 'duplicates' },
      { expr: `sum(rate(meterline_aggregator_meter_rows_written_total[${R}]))`, legend: 'meter rows' },
    ], 'ops'),
    ts('Consumer lag in records', [{ expr: 'sum by (topic) (meterline_aggregator_consumer_lag)', legend: '{{topic}}' }], 'short'),
    ts('ClickHouse insert p99 by table', [{ expr: `histogram_quantile(0.99, sum by (le, table) (rate(meterline_clickhouse_insert_duration_seconds_bucket[${R}])))`, legend: '{{table}}' }], 's'),
  ],
}

const billing: DashboardSpec = {
  uid: 'meterline-billing',
  title: 'Meterline billing',
  description: 'Invoices and payments, counted when their transaction commits. Amounts are in minor units of each currency (cents for USD, yen for JPY); the exact decimal books are in Postgres.',
  tags: ['meterline'],
  panels: [
    row('Invoices'),
    stat('Drafted (24 h)', 'sum(increase(meterline_invoices_total{event="drafted"}[24h]))'),
    stat('Skipped, zero amount (24 h)', 'sum(increase(meterline_invoices_total{event="skipped"}[24h]))'),
    stat('Finalized (24 h)', 'sum(increase(meterline_invoices_total{event="finalized"}[24h]))'),
    stat('Voided (24 h)', 'sum(increase(meterline_invoices_total{event="voided"}[24h]))'),
    stat('Payments (24 h)', 'sum(increase(meterline_payments_total[24h]))'),
    stat('Job failures (24 h)', jobFailures('24h'), 'short', { red: 1 }),
    ts('Invoice events per hour', [{ expr: 'sum by (event) (increase(meterline_invoices_total[1h]))', legend: '{{event}}' }], 'short', { width: 12 }),
    ts('Payments per hour by currency', [{ expr: 'sum by (currency) (increase(meterline_payments_total[1h]))', legend: '{{currency}}' }], 'short', { width: 12 }),
    row('Amounts (minor units)'),
    ts('Finalized per hour by currency', [{ expr: 'sum by (currency) (increase(meterline_invoiced_amount_minor_total[1h]))', legend: '{{currency}}' }], 'short'),
    ts('Net invoiced (finalized minus voided), 24 h', [
      { expr: 'sum by (currency) (increase(meterline_invoiced_amount_minor_total[24h])) - (sum by (currency) (increase(meterline_voided_amount_minor_total[24h])) or sum by (currency) (increase(meterline_invoiced_amount_minor_total[24h])) * 0)', legend: '{{currency}}' },
    ], 'short'),
    ts('Paid per hour by currency', [{ expr: 'sum by (currency) (increase(meterline_payments_amount_minor_total[1h]))', legend: '{{currency}}' }], 'short'),
    row('Jobs'),
    ts('Scheduled job runs (per 5 m) by outcome', [{ expr: 'sum by (job_name, outcome) (increase(meterline_scheduler_job_runs_total[5m]))', legend: '{{job_name}} {{outcome}}' }], 'short'),
    ts('Queue job failures (per 5 m)', [{ expr: 'sum by (queue) (increase(meterline_queue_job_failures_total[5m]))', legend: '{{queue}}' }], 'short'),
    ts('Job duration p99', [{ expr: `histogram_quantile(0.99, sum by (le, job_name) (rate(meterline_scheduler_job_duration_seconds_bucket[${R}])))`, legend: '{{job_name}}' }], 's'),
    ts('Job items /s', [{ expr: `sum by (job_name) (rate(meterline_scheduler_job_items_total[${R}]))`, legend: '{{job_name}}' }], 'ops', { width: 12 }),
    ts('Background failures /s by operation', [{ expr: `sum by (operation) (rate(meterline_background_failures_total[${R}]))`, legend: '{{operation}}' }], 'ops', { width: 12 }),
  ],
}

const webhooks: DashboardSpec = {
  uid: 'meterline-webhooks',
  title: 'Meterline webhooks',
  description: 'Outbound webhook deliveries: outcomes (success, retried, failed for good, postponed by an open circuit or a concurrency limit), latency from enqueue to success, attempt durations and endpoint circuits.',
  tags: ['meterline'],
  panels: [
    stat('Delivered /s', `sum(rate(meterline_webhook_deliveries_total{outcome="success"}[${R}])) or vector(0)`, 'ops'),
    stat('Attempt failure ratio', webhookFailureRatio, 'percentunit', { red: 0.2 }),
    stat('Failed for good (1 h)', 'sum(increase(meterline_webhook_deliveries_total{outcome="failed"}[1h])) or vector(0)', 'short', { red: 1 }),
    stat('Enqueue to delivered p99', `histogram_quantile(0.99, sum by (le) (rate(meterline_webhook_delivery_latency_seconds_bucket[${R}])))`, 's', { red: 60 }),
    stat('Outbox relay failures (1 h)', 'sum(increase(meterline_background_failures_total{operation="outbox_relay"}[1h])) or vector(0)', 'short', { red: 1 }),
    stat('Webhook retry job failures (1 h)', 'sum(increase(meterline_scheduler_job_runs_total{job_name=~".*webhook.*", outcome="failure"}[1h])) or vector(0)', 'short', { red: 1 }),
    ts('Delivery steps /s by outcome', [{ expr: `sum by (outcome) (rate(meterline_webhook_deliveries_total[${R}]))`, legend: '{{outcome}}' }], 'ops', { width: 12, stacked: true }),
    ts('Attempt failure ratio', [{ expr: webhookFailureRatio, legend: 'failed attempts / attempts' }], 'percentunit', { width: 12 }),
    ts('Enqueue to delivered', [
      { expr: `histogram_quantile(0.5, sum by (le) (rate(meterline_webhook_delivery_latency_seconds_bucket[${R}])))`, legend: 'p50' },
      { expr: `histogram_quantile(0.99, sum by (le) (rate(meterline_webhook_delivery_latency_seconds_bucket[${R}])))`, legend: 'p99' },
    ], 's', { width: 8 }),
    ts('Attempt duration p99 by outcome', [{ expr: `histogram_quantile(0.99, sum by (le, outcome) (rate(meterline_webhook_attempt_duration_seconds_bucket[${R}])))`, legend: '{{outcome}}' }], 's', { width: 8 }),
    ts('Endpoint circuits opened and closed (per 5 m)', [{ expr: 'sum by (to) (increase(meterline_webhook_circuit_transitions_total[5m]))', legend: '{{to}}' }], 'short', { width: 8 }),
  ],
}

export const DASHBOARDS: Record<string, DashboardSpec> = {
  'overview.json': overview,
  'ingestion.json': ingestion,
  'billing.json': billing,
  'webhooks.json': webhooks,
}

export function buildDashboards(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(Object.entries(DASHBOARDS).map(([file, spec]) => [file, dashboard(spec)]))
}
