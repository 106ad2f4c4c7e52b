// Business metrics after a workload whose figures are worked out by hand (demo-workload.ts),
// read the way Prometheus reads them: GET /metrics on the running platform.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { MetricLabels } from '../../platform/metric-labels.js'
import { usePlatform } from '../support/platform.js'
import { runDemoWorkload, type DemoOutcome } from './demo-workload.js'
import { allExpressions } from './dashboard-files.js'
import { isDeclared, metricNames } from './promql-names.js'
import { declaredMetrics, parseExposition, scrape, scrapeText, total, type Sample } from './scrape.js'

const p = usePlatform()
let before_: Sample[]
let after_: Sample[]
let afterText: string
let demo: DemoOutcome
let ran: Promise<void> | undefined
// Once, from the first test (the platform is started by then): root-level hooks of a file are
// not ordered after usePlatform's.
const workload = () =>
  (ran ??= (async () => {
    before_ = await scrape(p.url)
    demo = await runDemoWorkload(p)
    afterText = await scrapeText(p.url)
    after_ = parseExposition(afterText)
  })())

const delta = (name: string, labels: Record<string, string> = {}) => total(after_, name, labels) - total(before_, name, labels)

test('invoices drafted, skipped, finalized and voided, counted once each after commit', async () => {
  await workload()
  assert.equal(delta('meterline_invoices_total', { event: 'drafted' }), 2, 'the cycle invoice and the manual one')
  assert.equal(delta('meterline_invoices_total', { event: 'skipped' }), 1, 'the idle customer owes 0.00')
  assert.equal(delta('meterline_invoices_total', { event: 'finalized' }), 2)
  assert.equal(delta('meterline_invoices_total', { event: 'voided' }), 1)
  // 1375 tokens x 0.002 = 2.75, + 10.00 = 12.75 USD = 1275 cents; the manual 5.00 = 500
  assert.equal(delta('meterline_invoiced_amount_minor_total', { currency: 'USD' }), 1775)
  assert.equal(delta('meterline_voided_amount_minor_total', { currency: 'USD' }), 500)
  assert.equal(delta('meterline_payments_total', { currency: 'USD' }), 1)
  assert.equal(delta('meterline_payments_amount_minor_total', { currency: 'USD' }), 1275)
})

test('events per tenant and meter carry bounded labels', async () => {
  await workload()
  // The test configuration allow-lists no tenant: the demo tenant is one of 8 hashed buckets.
  const tenant = new MetricLabels(p.config.metricLabels).tenant(demo.tenantId)
  assert.match(tenant, /^other_0[0-7]$/)
  assert.equal(delta('meterline_tenant_events_total', { tenant, outcome: 'accepted' }), 250)
  assert.equal(delta('meterline_tenant_events_total', { tenant, outcome: 'rejected' }), 1)
  assert.equal(delta('meterline_meter_events_total', { tenant, meter: 'other' }), 250)
  const tenants = new Set(after_.filter((s) => s.name === 'meterline_tenant_events_total').map((s) => s.labels.tenant))
  for (const t of tenants) assert.match(t, /^other_0[0-7]$/, 'no raw tenant id in a label')
})

test('freshness and lag are exported per partition of the events topic', async () => {
  await workload()
  assert.ok(delta('meterline_usage_freshness_seconds_count') >= 1, 'the demo batch was observed')
  const lag = after_.filter((s) => s.name === 'meterline_aggregator_lag_seconds' && s.labels.topic === p.config.eventsTopic)
  assert.ok(lag.length >= 1, 'a lag series for the topic')
  // Every event was counted before the scrape: nothing is behind.
  for (const s of lag) assert.equal(s.value, 0)
  for (const s of after_.filter((x) => x.name === 'meterline_aggregator_lag_events' && x.labels.topic === p.config.eventsTopic)) assert.equal(s.value, 0)
})

test('every metric a dashboard or an alert rule reads is exported', async () => {
  await workload()
  const declared = declaredMetrics(afterText)
  const withSamples = new Set(after_.map((s) => s.name.replace(/_(bucket|sum|count)$/, '')))
  const missing: string[] = []
  const quiet = new Set<string>()
  for (const { where, expr } of allExpressions()) {
    for (const name of metricNames(expr)) {
      if (isDeclared(name, declared)) {
        if (name !== 'up' && !withSamples.has(name.replace(/_(bucket|sum|count)$/, ''))) quiet.add(name)
      } else missing.push(`${where}: ${name}`)
    }
  }
  assert.deepEqual(missing, [], 'names read by a panel or a rule but exported by no service')
  // Shown in the test output: names the workload leaves without a sample (failures, webhooks).
  console.log(`exported, no sample after the workload: ${[...quiet].sort().join(', ') || 'none'}`)
})
