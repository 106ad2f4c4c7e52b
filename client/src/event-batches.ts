// Events ready to send: each with its event_id and timestamp fixed before the first attempt, in
// requests of at most 1000 (the bulk route's limit). An event is its (event_id, timestamp): the
// aggregator counts it once per tenant and environment, whenever and however often it arrives
// within the dedup horizon, so every resend of a request must carry the same ids and times (a
// timestamp left to the server would be the time of each attempt: another event).
import type { paths } from './schema.js'

export type EventInput = paths['/v1/events/raw/bulk']['post']['requestBody']['content']['application/json']['events'][number]
export type KeyedEvent = EventInput & { event_id: string; timestamp: string }

export const MAX_EVENTS_PER_REQUEST = 1000

export function newEventId(): string {
  return `evt_${globalThis.crypto.randomUUID()}`
}

/** Keeps the ids and timestamps the caller chose; gives the others one, once (the time of this call). */
export function withEventIds(events: readonly EventInput[], newId: () => string = newEventId, now = new Date()): KeyedEvent[] {
  const at = now.toISOString()
  return events.map((e) => ({ ...e, event_id: e.event_id || newId(), timestamp: e.timestamp ?? at }))
}

export function toRequests<T>(events: readonly T[], size = MAX_EVENTS_PER_REQUEST): T[][] {
  if (size < 1) throw new RangeError('size must be at least 1')
  const out: T[][] = []
  for (let i = 0; i < events.length; i += size) out.push(events.slice(i, i + size))
  return out
}
