// Meter use cases: create, read, archive, and the usage query over the ClickHouse rows.
import type { EntityManager } from '@mikro-orm/postgresql'
import { D } from '../pricing/index.js'
import { ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { WindowSize } from '../../clickhouse/queries/meter-usage.js'
import type { UsageReader } from './usage-reader.js'
import type { Scope } from '../db/scope.js'
import { MeterSchema, type BucketSize, type Meter, type MeterAggregation, type MeterFilter, type MeterRounding } from './meter.entity.js'
import { findInScope, publishedBy } from '../db/scoped-records.js'
import { checkAggregation, checkRounding } from './meter-rules.js'
import { roundQuantity } from './rounding.js'

export interface CreateMeterInput {
  name: string
  event_name: string
  aggregation: MeterAggregation
  filters?: MeterFilter[]
  reset_usage?: Meter['reset_usage']
  rounding?: MeterRounding | null
  bucket_size?: BucketSize
  metadata?: Record<string, string>
}

export async function createMeter(em: EntityManager, scope: Scope, userId: string, input: CreateMeterInput): Promise<Meter> {
  const eventName = input.event_name.trim()
  if (!eventName) throw new ValidationError('event_name must not be blank', 'event_name')
  const aggregation = checkAggregation(input.aggregation)
  const rounding = checkRounding(input.rounding)
  const meter = em.create(MeterSchema, {
    id: newId('meter'),
    ...scope,
    name: input.name,
    event_name: eventName,
    aggregation,
    filters: (input.filters ?? []).map((f) => ({ key: f.key, values: [...f.values] })),
    reset_usage: input.reset_usage ?? 'BILLING_PERIOD',
    rounding,
    bucket_size: input.bucket_size ?? 'HOUR',
    ...publishedBy(userId, input.metadata),
  })
  await em.flush()
  return meter
}

export async function getMeter(em: EntityManager, scope: Scope, id: string): Promise<Meter> {
  return findInScope(em, MeterSchema, scope, id, 'meter')
}

export interface UsageRequest {
  external_customer_id?: string
  /** usage of several customers as one pool (and with external_customer_id, both filters apply) */
  external_customer_ids?: string[]
  start_time: string
  end_time: string
  window_size?: WindowSize
  group_by?: string[]
}

export interface UsageResult {
  meter_id: string
  event_name: string
  aggregation: string
  external_customer_id: string | null
  start_time: string
  end_time: string
  window_size: WindowSize | null
  value: string
  event_count: number
  items: { window_start: string | null; value: string; event_count: number; group_by: Record<string, string> }[]
}

const avgOrValue = (agg: string, value: string, count: string): string =>
  agg === 'AVG' ? (count === '0' ? '0' : D(value).div(count).toString()) : value

/** A time-weighted average splits by the declared group_by only (segments carry no other property). */
function checkWeightedRequest(meter: Meter, req: UsageRequest): void {
  const groupBy = req.group_by ?? []
  if (groupBy.length > 1 || groupBy.some((g) => g !== meter.aggregation.group_by)) {
    throw new ValidationError(`group_by of a WEIGHTED_SUM meter may only be its declared group_by (${meter.aggregation.group_by ?? 'none'})`, 'group_by')
  }
}

const isoUtc = (chTime: string) => new Date(chTime.replace(' ', 'T') + 'Z').toISOString()

/**
 * The meter's usage over [start_time, end_time), its value and each item's rounded by the meter's
 * rounding; `raw: true` skips the rounding (for callers that add items up and round the sums).
 */
export async function meterUsage(read: UsageReader, meter: Meter, req: UsageRequest, opts: { raw?: boolean } = {}): Promise<UsageResult> {
  const round = (v: string) => (opts.raw ? v : roundQuantity(v, meter.rounding))
  const start = new Date(req.start_time)
  const end = new Date(req.end_time)
  if (!(start < end)) throw new ValidationError('start_time must be before end_time', 'start_time')
  if (meter.aggregation.type === 'WEIGHTED_SUM') checkWeightedRequest(meter, req)
  const base = {
    tenantId: meter.tenant_id,
    environmentId: meter.environment_id,
    meterId: meter.id,
    aggregation: meter.aggregation.type,
    declaredGroupBy: meter.aggregation.group_by,
    externalCustomerId: req.external_customer_id,
    externalCustomerIds: req.external_customer_ids,
    start,
    end,
  }
  const [total] = await read(base)
  const items =
    req.window_size || req.group_by?.length
      ? await read({ ...base, windowSize: req.window_size, groupBy: req.group_by })
      : []
  return {
    meter_id: meter.id,
    event_name: meter.event_name,
    aggregation: meter.aggregation.type,
    external_customer_id: req.external_customer_id ?? null,
    start_time: start.toISOString(),
    end_time: end.toISOString(),
    window_size: req.window_size ?? null,
    value: round(avgOrValue(meter.aggregation.type, total.value, total.event_count)),
    event_count: Number(total.event_count),
    items: items.map((r) => ({
      window_start: r.window_start ? isoUtc(r.window_start) : null,
      value: round(avgOrValue(meter.aggregation.type, r.value, r.event_count)),
      event_count: Number(r.event_count),
      group_by: r.groups,
    })),
  }
}
