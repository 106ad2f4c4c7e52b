import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, json, text, type BaseRecord } from '../db/common.js'

export const AGGREGATION_TYPES = ['SUM', 'COUNT', 'COUNT_UNIQUE', 'MAX', 'LATEST', 'AVG', 'WEIGHTED_SUM'] as const
export type AggregationType = (typeof AGGREGATION_TYPES)[number]

// types, not interfaces: the meter routes check them against their response schemas
export type MeterAggregation = {
  type: AggregationType
  /** event property the value is read from; required except for COUNT, or when expression is set */
  field?: string | null
  /** arithmetic over event properties instead of field (schemas/meter-expression.ts) */
  expression?: string | null
  /** decimal string applied to every value, e.g. "0.001" to turn bytes into KB */
  multiplier?: string | null
  /** default group_by property for usage queries */
  group_by?: string | null
}

export type MeterFilter = {
  key: string
  values: string[]
}

export const ROUNDING_MODES = ['NONE', 'UP', 'DOWN', 'HALF_UP'] as const
export type RoundingMode = (typeof ROUNDING_MODES)[number]

/** Rounding of the aggregated quantity where usage is read (billing-api/meters/rounding.ts). */
export type MeterRounding = {
  mode: RoundingMode
  /** decimal places kept, 0 to 12 */
  precision: number
}

export const BUCKET_SIZES = ['HOUR', 'MINUTE'] as const
export type BucketSize = (typeof BUCKET_SIZES)[number]

export interface Meter extends BaseRecord {
  name: string
  event_name: string
  aggregation: MeterAggregation
  filters: MeterFilter[]
  reset_usage: 'BILLING_PERIOD' | 'NEVER'
  rounding?: MeterRounding | null
  /** the granularity of commitment time buckets on prices of this meter */
  bucket_size: BucketSize
}

export const MeterSchema = new EntitySchema<Meter>({
  name: 'Meter',
  tableName: 'meters',
  properties: {
    ...baseColumns<Meter>(),
    name: text(),
    event_name: text(),
    aggregation: json(),
    filters: json(),
    reset_usage: text(),
    rounding: json(true),
    bucket_size: text(),
  },
})
