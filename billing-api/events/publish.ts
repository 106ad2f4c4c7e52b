// The one way to publish a system event (spec: Events). The event is written to the
// outbox with the EntityManager of the change that causes it, so it commits or rolls back
// with that change; a relay drains the outbox to the Kafka topic system_events.
import type { EntityManager } from '@mikro-orm/postgresql'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import { afterCommit } from '../db/after-commit.js'
import { countSystemEvent } from './event-metrics.js'
import { SystemEventSchema, type SystemEvent } from './system-event.entity.js'

export interface SystemEventInput {
  event_name: string
  entity_type: string
  entity_id: string
  payload?: Record<string, unknown>
}

/** A system event as the relay produces it to the system_events topic and fans it out. */
export interface SystemEventMessage {
  id: string
  event_name: string
  entity_type: string
  entity_id: string
  tenant_id: string
  environment_id: string
  timestamp: string
  payload: Record<string, unknown>
}

export function publishSystemEvent(em: EntityManager, scope: Scope, event: SystemEventInput): SystemEvent {
  afterCommit(em, () => countSystemEvent(event.event_name, event.payload ?? {}))
  return em.create(SystemEventSchema, {
    id: newId('sysevt'),
    ...scope,
    event_name: event.event_name,
    entity_type: event.entity_type,
    entity_id: event.entity_id,
    payload: event.payload ?? {},
    published_at: null,
    status: 'published',
    metadata: {},
  })
}
