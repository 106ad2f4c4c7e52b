import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, json, text, type BaseRecord } from '../db/common.js'

export const FEATURE_TYPES = ['metered', 'boolean', 'static'] as const
export type FeatureType = (typeof FEATURE_TYPES)[number]

export interface AlertThreshold {
  threshold: number
}

export interface AlertSettings {
  alert_enabled: boolean
  critical: AlertThreshold | null
  warning: AlertThreshold | null
  info: AlertThreshold | null
}

/** How usage is shown to people: e.g. bytes reported as GB with conversion_rate 1000000000. */
export interface ReportingUnit {
  conversion_rate: number
  unit_singular: string
  unit_plural: string
}

export interface Feature extends BaseRecord {
  name: string
  lookup_key: string
  description: string | null
  type: FeatureType
  meter_id: string | null
  group_id: string | null
  unit_singular: string | null
  unit_plural: string | null
  alert_settings: AlertSettings | null
  reporting_unit: ReportingUnit | null
}

export const FeatureSchema = new EntitySchema<Feature>({
  name: 'Feature',
  tableName: 'features',
  properties: {
    ...baseColumns<Feature>(),
    name: text(),
    lookup_key: text(),
    description: text(true),
    type: text(),
    meter_id: text(true),
    group_id: text(true),
    unit_singular: text(true),
    unit_plural: text(true),
    alert_settings: json(true),
    reporting_unit: json(true),
  },
})
