// Response schemas of the feature routes (registered by module.ts, referred to by $id).
import { alwaysNull, str, stringOrNull, anyJson, recordSchema } from '../http/response-schemas.js'

export const featureSchema = recordSchema('Feature', {
  name: str,
  lookup_key: str,
  description: stringOrNull,
  type: str,
  meter_id: stringOrNull,
  group_id: stringOrNull,
  unit_singular: stringOrNull,
  unit_plural: stringOrNull,
  alert_settings: anyJson,
  reporting_unit: anyJson,
  /** the meter is not expanded: read it at /meters/{meter_id} */
  meter: alwaysNull,
})
