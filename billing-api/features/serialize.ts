import { serializeBase, pick } from '../db/common.js'
import type { Feature } from './feature.entity.js'

export function serializeFeature(f: Feature) {
  return {
    ...serializeBase(f),
    ...pick(f, ['name', 'lookup_key', 'description', 'type', 'meter_id', 'group_id', 'unit_singular', 'unit_plural', 'alert_settings', 'reporting_unit']),
    meter: null,
  }
}
