import { serializeBase } from '../db/common.js'
import type { Feature } from './feature.entity.js'

export function serializeFeature(f: Feature) {
  return {
    ...serializeBase(f),
    name: f.name,
    lookup_key: f.lookup_key,
    description: f.description,
    type: f.type,
    meter_id: f.meter_id,
    group_id: f.group_id,
    unit_singular: f.unit_singular,
    unit_plural: f.unit_plural,
    alert_settings: f.alert_settings,
    reporting_unit: f.reporting_unit,
  }
}

export type FeatureResponse = ReturnType<typeof serializeFeature>
