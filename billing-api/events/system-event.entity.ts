import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, json, text, timestamp, type BaseRecord } from '../db/common.js'

/** A system event waiting in the outbox; written in the same transaction as its cause. */
export interface SystemEvent extends BaseRecord {
  event_name: string
  entity_type: string
  entity_id: string
  payload: Record<string, unknown>
  published_at: Date | null
}

export const SystemEventSchema = new EntitySchema<SystemEvent>({
  name: 'SystemEvent',
  tableName: 'system_events_outbox',
  properties: {
    ...baseColumns<SystemEvent>(),
    event_name: text(),
    entity_type: text(),
    entity_id: text(),
    payload: json(),
    published_at: timestamp(true),
  },
})
