// POST /v1/events and POST /v1/events/raw/bulk (also at /v1/events/bulk, where Flexprice's SDK sends it). 202 only after the whole request is durable:
// fsync'ed in the ingest spool (ingest/spool), or, with the spool off, acknowledged by Kafka.
// A failure answers 503 and the client retries with the same event_ids.
import type { FastifyInstance } from 'fastify'
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts'
import type { Producer } from 'kafkajs'
import { ServiceUnavailableError } from '../platform/errors.js'
import { ingestBackpressure, ingestEventsAccepted, ingestEventsRejected } from '../platform/metrics.js'
import type { Clock } from '../platform/clock.js'
import type { LagGate } from '../platform/lag-gate.js'
import { bulkAcceptedSchema, bulkSchema, eventAcceptedSchema, eventSchema, type EventInput } from './event-schema.js'
import { checkEvents, type TimeWindow } from './event-rules.js'
import { encode, enrich, produce } from './pipeline.js'
import { countTenantEvents } from './tenant-metrics.js'
import type { Spool } from './spool/spool.js'

export interface IngestDeps {
  producer: Producer
  topic: string
  clock: Clock
  /** all-in-one without the spool: refuses batches while the in-process aggregator is too far behind */
  gate?: LagGate
  /** when set, a batch is accepted once it is in the spool; its forwarder produces it */
  spool?: Spool
  /** accepted event timestamps (event-rules.ts) */
  timeWindow: TimeWindow
  /** partitions of the events topic (records are split by the partition of their events' shards) */
  partitions: number
  /** without the spool: resolves once the topic's partition count was found to match (a record for a missing partition is lost) */
  checkLayout?: () => Promise<void>
}

/** The two ingest routes (under /v1); the ingest thread's forwarding routes document the same schemas. */
export const singleEventRoute = { url: '/events', schema: { tags: ['events'], body: eventSchema, response: { 202: eventAcceptedSchema } } } as const
const bulkEventsSchema = { tags: ['events'], body: bulkSchema, response: { 202: bulkAcceptedSchema } } as const
export const bulkEventsRoutes = [{ url: '/events/raw/bulk', schema: bulkEventsSchema }, { url: '/events/bulk', schema: bulkEventsSchema }] as const

/** Events in a request body that failed validation: the array's length, else one. */
function eventCount(body: unknown): number {
  const events = typeof body === 'object' && body !== null && 'events' in body ? body.events : undefined
  return Array.isArray(events) ? events.length : 1
}

export async function ingestRoutes(instance: FastifyInstance, deps: IngestDeps): Promise<void> {
  const app = instance.withTypeProvider<JsonSchemaToTsProvider>()
  async function accept(inputs: EventInput[], tenantId: string, environmentId: string, prefix: (i: number) => string) {
    try {
      // The later of the injected clock and the wall clock: the same in production, and a
      // test or simulation that moves the billing clock may send events at its time.
      checkEvents(inputs, deps.timeWindow, Math.max(deps.clock.now().getTime(), Date.now()), prefix)
    } catch (err) {
      ingestEventsRejected.inc({ reason: 'validation' }, inputs.length)
      countTenantEvents(tenantId, 'rejected', inputs.length)
      throw err
    }
    const batch = enrich(inputs, { tenantId, environmentId }, deps.clock.now().getTime())
    const records = encode(batch, deps.partitions).map((r) => ({ ...r, tenantId, environmentId }))
    if (deps.spool) {
      try {
        await deps.spool.append(records)
      } catch (err) {
        ingestEventsRejected.inc({ reason: 'spool_unavailable' }, inputs.length)
        countTenantEvents(tenantId, 'rejected', inputs.length)
        throw err
      }
      ingestEventsAccepted.inc(inputs.length)
      countTenantEvents(tenantId, 'accepted', inputs.length)
      return batch
    }
    try {
      await deps.checkLayout?.()
      await produce(deps.producer, deps.topic, records)
      deps.gate?.produced(records.reduce((n, r) => n + r.value.length, 0))
    } catch (err) {
      ingestEventsRejected.inc({ reason: 'kafka_unavailable' }, inputs.length)
      countTenantEvents(tenantId, 'rejected', inputs.length)
      app.log.error({ err }, 'kafka produce failed')
      throw new ServiceUnavailableError('the event log did not acknowledge the batch; retry with the same event_ids')
    }
    ingestEventsAccepted.inc(inputs.length)
    countTenantEvents(tenantId, 'accepted', inputs.length)
    return batch
  }

  // Backpressure is decided before the body is read: a refused batch costs no parsing.
  if (deps.gate) {
    const gate = deps.gate
    app.addHook('onRequest', async () => {
      try {
        gate.admit()
      } catch (err) {
        ingestBackpressure.inc()
        throw err
      }
    })
  }

  app.addHook('onError', async (request, _reply, err) => {
    if ((err as { validation?: unknown }).validation) {
      const n = eventCount(request.body)
      ingestEventsRejected.inc({ reason: 'validation' }, n)
      countTenantEvents(request.auth.tenantId, 'rejected', n)
    }
  })

  app.post(singleEventRoute.url, { schema: singleEventRoute.schema }, async (request, reply) => {
    const batch = await accept([request.body], request.auth.tenantId, request.auth.environmentId, () => '')
    return reply.code(202).send({ message: 'event accepted for processing', event_id: batch.events[0].event_id })
  })

  for (const route of bulkEventsRoutes) {
    app.post(route.url, { schema: route.schema }, async (request, reply) => {
      const { events } = request.body
      const batch = await accept(events, request.auth.tenantId, request.auth.environmentId, (i) => `events[${i}].`)
      return reply.code(202).send({ message: 'events accepted for processing', count: events.length, batch_id: batch.batch_id })
    })
  }
}
