// Audit: recounts meters from events_raw through the aggregator's own meter rules and compares
// each with the bucket read the API and invoices use. Used by `npm run usage:verify`, the fault
// tests and bench:invoices. Run it when nothing is in flight in the aggregator.
import { Decimal } from 'decimal.js'
import type { ClickHouse } from '../clickhouse/client.js'
import { cursorAfter, RAW_START, rawEventsPage } from '../clickhouse/queries/events.js'
import { queryMeterUsage, type UsageAggregation } from '../clickhouse/queries/meter-usage.js'
import { indexMeters, meterHits } from './meter-rows.js'
import type { MeterDefinition } from '../schemas/meters.js'
import { Recount, WeightedRecount } from './recount.js'
import { queryWeightedUsage, weightedValue } from '../clickhouse/queries/weighted-usage.js'

export interface MeterAudit {
  meter: MeterDefinition
  raw: { value: string; events: number }
  buckets: { value: string; events: number }
  same: boolean
}

const PAGE = 20_000

export async function auditMeter(ch: ClickHouse, meter: MeterDefinition, from: Date, to: Date): Promise<MeterAudit> {
  if (meter.aggregation.type === 'WEIGHTED_SUM') return auditWeightedMeter(ch, meter, from, to)
  const recount = new Recount(meter.aggregation.type)
  const index = indexMeters([meter])
  const scope = { tenantId: meter.tenant_id, environmentId: meter.environment_id, eventName: meter.event_name }
  for (let after = RAW_START; ; ) {
    const page = await rawEventsPage(ch, scope, after, PAGE)
    for (const r of page) {
      const ts = Number(r.timestamp_ms)
      if (ts < from.getTime() || ts >= to.getTime()) continue
      const e = { event_id: r.event_id, event_name: r.event_name, external_customer_id: r.external_customer_id, customer_id: null, timestamp: ts, source: null, properties: r.properties }
      for (const hit of meterHits(index, meter.tenant_id, meter.environment_id, e, {})?.hits ?? []) recount.add(hit.value, hit.text, ts, r.event_id)
    }
    if (page.length < PAGE) break
    after = cursorAfter(page[page.length - 1])
  }
  const [bucket] = await queryMeterUsage(ch, {
    tenantId: meter.tenant_id, environmentId: meter.environment_id, meterId: meter.id,
    aggregation: meter.aggregation.type as UsageAggregation, start: from, end: to,
  })
  return {
    meter,
    raw: { value: recount.value.toFixed(), events: recount.count },
    buckets: { value: bucket.value, events: Number(bucket.event_count) },
    same: new Decimal(bucket.value).eq(recount.value) && Number(bucket.event_count) === recount.count,
  }
}

async function auditWeightedMeter(ch: ClickHouse, meter: MeterDefinition, from: Date, to: Date): Promise<MeterAudit> {
  const recount = new WeightedRecount()
  const index = indexMeters([meter])
  const scope = { tenantId: meter.tenant_id, environmentId: meter.environment_id, eventName: meter.event_name }
  for (let after = RAW_START; ; ) {
    const page = await rawEventsPage(ch, scope, after, PAGE)
    for (const r of page) {
      const ts = Number(r.timestamp_ms)
      if (ts >= to.getTime()) continue
      const e = { event_id: r.event_id, event_name: r.event_name, external_customer_id: r.external_customer_id, customer_id: null, timestamp: ts, source: null, properties: r.properties }
      for (const hit of meterHits(index, meter.tenant_id, meter.environment_id, e, {})?.hits ?? []) recount.add(r.external_customer_id, hit.value, ts, r.event_id)
    }
    if (page.length < PAGE) break
    after = cursorAfter(page[page.length - 1])
  }
  const raw = recount.over(from.getTime(), to.getTime())
  const rawValue = weightedValue(raw.integral.toFixed(), to.getTime() - from.getTime())
  const [bucket] = await queryWeightedUsage(ch, {
    tenantId: meter.tenant_id, environmentId: meter.environment_id, meterId: meter.id, aggregation: 'WEIGHTED_SUM', start: from, end: to,
  })
  return {
    meter,
    raw: { value: rawValue, events: raw.count },
    buckets: { value: bucket.value, events: Number(bucket.event_count) },
    same: bucket.value === rawValue && Number(bucket.event_count) === raw.count,
  }
}

export async function auditMeters(ch: ClickHouse, meters: MeterDefinition[], from: Date, to: Date): Promise<MeterAudit[]> {
  const out: MeterAudit[] = []
  for (const m of meters) out.push(await auditMeter(ch, m, from, to))
  return out
}
