// Meter usage detailed analytics: per meter (and per value of the group_by properties) the
// total of [start_time, end_time) and, with breakdown_bucket, the series of window buckets
// (MINUTE, HOUR, DAY; windows without usage are absent). Values come from the meter buckets
// through the one usage query builder. A meter's first published feature with a
// reporting_unit converts what is shown (reported_usage beside every value).
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import type { WindowSize } from '../../clickhouse/queries/meter-usage.js'
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import { FeatureSchema, type Feature } from '../features/feature.entity.js'
import { toReportingUnit, type ReportedUsage } from '../features/index.js'
import { MeterSchema, type Meter } from '../meters/meter.entity.js'
import { meterValue, usageReader } from '../meters/index.js'

export interface MeterAnalyticsRequest {
  start_time: string
  end_time: string
  meter_ids?: string[]
  external_customer_id?: string
  external_customer_ids?: string[]
  group_by?: string[]
  window_size?: WindowSize
  breakdown_bucket?: boolean
}

export interface AnalyticsBucket {
  window_start: string
  value: string
  event_count: number
  reported_usage: ReportedUsage | null
}

export interface MeterAnalyticsItem {
  meter_id: string
  meter_name: string
  event_name: string
  aggregation: string
  feature_id: string | null
  group_by: Record<string, string>
  value: string
  event_count: number
  reported_usage: ReportedUsage | null
  buckets: AnalyticsBucket[] | null
}

const isWeighted = (m: Meter) => m.aggregation.type === 'WEIGHTED_SUM'

const isoUtc = (chTime: string) => new Date(chTime.replace(' ', 'T') + 'Z').toISOString()

/** The published meters asked for (all of them when none are named); an unknown id is a 400. */
async function metersOf(em: EntityManager, scope: Scope, ids: string[] | undefined): Promise<Meter[]> {
  const meters = await em.find(MeterSchema, { ...scope, status: 'published', ...(ids ? { id: { $in: ids } } : {}) }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const missing = (ids ?? []).filter((id) => !meters.some((m) => m.id === id))
  if (missing.length) throw new ValidationError(`meter_ids: meter ${missing[0]} not found`, 'meter_ids')
  return meters
}

/** The feature whose reporting_unit shows each meter's usage: its first published feature with one. */
export async function reportingFeatures(em: EntityManager, scope: Scope, meterIds: string[]): Promise<Map<string, Feature>> {
  if (meterIds.length === 0) return new Map()
  const features = await em.find(FeatureSchema, { ...scope, status: 'published', meter_id: { $in: meterIds } }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const out = new Map<string, Feature>()
  for (const f of features) if (f.reporting_unit && !out.has(f.meter_id!)) out.set(f.meter_id!, f)
  return out
}

export async function meterAnalytics(ctx: BillingContext, em: EntityManager, scope: Scope, req: MeterAnalyticsRequest) {
  const start = new Date(req.start_time)
  const end = new Date(req.end_time)
  if (!(start < end)) throw new ValidationError('start_time must be before end_time', 'start_time')
  const windowSize = req.window_size ?? 'DAY'
  const meters = await metersOf(em, scope, req.meter_ids)
  const features = await reportingFeatures(em, scope, meters.map((m) => m.id))
  const read = usageReader(ctx)
  const items: MeterAnalyticsItem[] = []
  for (const meter of meters) {
    if (isWeighted(meter) && req.group_by?.some((g) => g !== meter.aggregation.group_by)) {
      throw new ValidationError(`group_by of WEIGHTED_SUM meter ${meter.id} may only be its declared group_by (${meter.aggregation.group_by ?? 'none'})`, 'group_by')
    }
  }
  for (const meter of meters) {
    const feature = features.get(meter.id) ?? null
    const report = (value: string) => toReportingUnit(value, feature?.reporting_unit ?? null)
    const agg = meter.aggregation.type
    const base = {
      tenantId: scope.tenant_id, environmentId: scope.environment_id, meterId: meter.id, aggregation: agg, declaredGroupBy: meter.aggregation.group_by,
      externalCustomerId: req.external_customer_id, externalCustomerIds: req.external_customer_ids, start, end, groupBy: req.group_by,
    }
    const totals = await read(base)
    const series = req.breakdown_bucket ? await read({ ...base, windowSize }) : []
    const key = (groups: Record<string, string>) => JSON.stringify(groups)
    const bucketsOf = new Map<string, AnalyticsBucket[]>()
    for (const r of series) {
      const value = meterValue(meter, r.value, r.event_count)
      const list = bucketsOf.get(key(r.groups)) ?? []
      list.push({ window_start: isoUtc(r.window_start!), value, event_count: Number(r.event_count), reported_usage: report(value) })
      bucketsOf.set(key(r.groups), list)
    }
    for (const t of totals) {
      // Without group_by the total row exists even with no usage at all: a meter with nothing shows 0.
      if (req.group_by?.length && t.event_count === '0') continue
      const value = meterValue(meter, t.value, t.event_count)
      items.push({
        meter_id: meter.id, meter_name: meter.name, event_name: meter.event_name, aggregation: agg, feature_id: feature?.id ?? null,
        group_by: t.groups, value, event_count: Number(t.event_count), reported_usage: report(value),
        buckets: req.breakdown_bucket ? (bucketsOf.get(key(t.groups)) ?? []) : null,
      })
    }
  }
  return { start_time: start.toISOString(), end_time: end.toISOString(), window_size: req.breakdown_bucket ? windowSize : null, items }
}
