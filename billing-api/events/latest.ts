// The latest counted events of the request's environment, as both event listings answer them.
import { latestEvents } from '../../clickhouse/queries/latest-events.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'

/** An event's properties as stored (JSON text): an object, or {} for anything else. */
function parseProperties(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text)
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

export interface LatestFilter {
  event_name?: string
  external_customer_id?: string
  event_id?: string
  limit: number
  offset: number
}

export async function readLatestEvents(ctx: BillingContext, scope: Scope, q: LatestFilter) {
  const { rows, total } = await latestEvents(ctx.ch, {
    tenantId: scope.tenant_id, environmentId: scope.environment_id,
    eventName: q.event_name?.trim(), externalCustomerId: q.external_customer_id, eventId: q.event_id, limit: q.limit, offset: q.offset,
  })
  const items = rows.map((r) => ({
    event_id: r.event_id, event_name: r.event_name, external_customer_id: r.external_customer_id, customer_id: r.customer_id,
    timestamp: new Date(Number(r.timestamp_ms)).toISOString(), source: r.source, properties: parseProperties(r.properties),
    ingested_at: new Date(Number(r.ingested_at_ms)).toISOString(),
  }))
  return { items, total }
}
