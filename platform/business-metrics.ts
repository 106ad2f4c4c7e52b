// Business metrics (prom-client), in the shared registry of platform/metrics.ts. Tenant and
// meter labels come from platform/metric-labels.ts (bounded). Names are the contract with the
// dashboards under grafana/dashboards and the alert rules in deploy/prometheus/alerts.yml.
import client from 'prom-client'
import { registry } from './metrics.js'

export const tenantEventsIngested = new client.Counter({
  name: 'meterline_tenant_events_total',
  help: 'Events per tenant label at ingest: accepted (durable, 202) or rejected (400, 503)',
  labelNames: ['tenant', 'outcome'],
  registers: [registry],
})

export const meterEventsCounted = new client.Counter({
  name: 'meterline_meter_events_total',
  help: 'Events counted into a meter by the aggregator (after dedup), per tenant and meter label',
  labelNames: ['tenant', 'meter'],
  registers: [registry],
})

const lagCollectors = new Set<() => void>()

/** A running aggregator's lag, computed when scraped; returns the unregister function. */
export function addLagCollector(collect: () => void): () => void {
  lagCollectors.add(collect)
  return () => lagCollectors.delete(collect)
}

function collectLag(): void {
  for (const collect of lagCollectors) collect()
}

export const aggregatorLagEvents = new client.Gauge({
  name: 'meterline_aggregator_lag_events',
  help: 'Events not yet processed, estimated: records behind times the mean events per record read on that partition',
  labelNames: ['topic', 'partition'],
  registers: [registry],
  collect: collectLag,
})

export const aggregatorLagSeconds = new client.Gauge({
  name: 'meterline_aggregator_lag_seconds',
  help: 'While a partition has records behind: how long ago the last committed batch was accepted by ingest (grows while stuck); 0 when caught up',
  labelNames: ['topic', 'partition'],
  registers: [registry],
  collect: collectLag,
})

export const usageFreshnessSeconds = new client.Histogram({
  name: 'meterline_usage_freshness_seconds',
  help: 'From ingest accepting a batch to the aggregator committing it (its usage is then visible)',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600],
  registers: [registry],
})

export const writePathStageSeconds = new client.Histogram({
  name: 'meterline_write_path_stage_seconds',
  help: 'Where a committed batch\'s freshness went, by stage: spool (ingest accepted it -> produced to Kafka), broker (produced -> fetched by the aggregator), queue (fetched -> its write started), write (started -> bucket block in: usage visible), commit (visible -> offsets committed)',
  labelNames: ['stage'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60],
  registers: [registry],
})

export const invoicesCounted = new client.Counter({
  name: 'meterline_invoices_total',
  help: 'Invoice state changes, counted after their transaction committed: drafted, skipped (zero amount), finalized, voided',
  labelNames: ['event'],
  registers: [registry],
})

// Present at 0 from the start, so the first invoice shows as an increase (a series born at 1
// has no earlier sample for increase() to compare with).
for (const event of ['drafted', 'skipped', 'finalized', 'voided']) invoicesCounted.inc({ event }, 0)

export const invoicedAmountMinor = new client.Counter({
  name: 'meterline_invoiced_amount_minor_total',
  help: 'Totals of finalized invoices in minor units of their currency (cents for USD, yen for JPY); credit invoices excluded',
  labelNames: ['currency'],
  registers: [registry],
})

export const voidedAmountMinor = new client.Counter({
  name: 'meterline_voided_amount_minor_total',
  help: 'Totals of voided invoices in minor units (finalized minus voided: the net amount invoiced)',
  labelNames: ['currency'],
  registers: [registry],
})

export const paymentsRecorded = new client.Counter({
  name: 'meterline_payments_total',
  help: 'Payments recorded on invoices, counted after their transaction committed',
  labelNames: ['currency'],
  registers: [registry],
})

export const paymentsAmountMinor = new client.Counter({
  name: 'meterline_payments_amount_minor_total',
  help: 'Amounts of recorded payments in minor units of their currency',
  labelNames: ['currency'],
  registers: [registry],
})

export const queueJobFailures = new client.Counter({
  name: 'meterline_queue_job_failures_total',
  help: 'BullMQ job attempts that failed (invoice compute, integration syncs); each retry that fails counts',
  labelNames: ['queue'],
  registers: [registry],
})

export const usageAuditSamples = new client.Counter({
  name: 'meterline_usage_audit_samples_total',
  help: 'Online exactness audit: sampled closed minutes of a meter and customer recounted from the raw events, by result (match, mismatch: confirmed on a second read)',
  labelNames: ['result'],
  registers: [registry],
})
