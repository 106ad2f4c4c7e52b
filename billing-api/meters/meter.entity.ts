import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, json, text, type BaseRecord } from '../db/common.js'

export const AGGREGATION_TYPES = ['SUM', 'COUNT', 'COUNT_UNIQUE', 'MAX', 'LATEST', 'AVG'] as const
export type AggregationType = (typeof AGGREGATION_TYPES)[number]

export interface MeterAggregation {
  type: AggregationType
  /** event property the value is read from; required except for COUNT */
  field?: string | null
  /** decimal string applied to every value, e.g. "0.001" to turn bytes into KB */
  multiplier?: string | null
  /** default group_by property for usage queries */
  group_by?: string | null
}

export interface MeterFilter {
  key: string
  values: string[]
}

export interface Meter extends BaseRecord {
  name: string
  event_name: string
  aggregation: MeterAggregation
  filters: MeterFilter[]
  reset_usage: 'BILLING_PERIOD' | 'NEVER'
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
  },
})
