// Response schemas of the meter routes (registered by module.ts, referred to by $id).
import { dateTimeOrNull, dateTimeString, integer, objectOf, recordSchema, str, stringArray, stringOrNull } from '../http/response-schemas.js'

export const meterSchema = recordSchema('Meter', {
  name: str,
  event_name: str,
  /** as created: only the keys given besides `type` */
  aggregation: objectOf(
    { type: str, field: stringOrNull, expression: stringOrNull, multiplier: stringOrNull, group_by: stringOrNull },
    { optional: ['field', 'expression', 'multiplier', 'group_by'] },
  ),
  filters: { type: 'array', items: objectOf({ key: str, values: stringArray }) },
  reset_usage: str,
  rounding: objectOf({ mode: str, precision: integer }, { nullable: true, optional: ['precision'] }),
  bucket_size: str,
})

/** POST /meters/{id}/usage */
export const meterUsageSchema = objectOf({
  meter_id: str,
  event_name: str,
  aggregation: str,
  external_customer_id: stringOrNull,
  start_time: dateTimeString,
  end_time: dateTimeString,
  window_size: stringOrNull,
  value: str,
  event_count: integer,
  items: {
    type: 'array',
    items: objectOf({
      window_start: dateTimeOrNull,
      value: str,
      event_count: integer,
      /** group_by property -> value of this row */
      group_by: { type: 'object', additionalProperties: str },
    }),
  },
})
