// JSON schemas of the ingest endpoints; fastify validates every request against them
// before anything is produced, so an invalid event rejects its whole batch.
export const MAX_EVENTS_PER_REQUEST = 1000

export const eventSchema = {
  type: 'object',
  required: ['event_name', 'external_customer_id'],
  additionalProperties: false,
  properties: {
    event_id: {
      type: 'string', minLength: 1, maxLength: 255,
      description: 'Your idempotency key (generated when absent). An event is its (event_id, timestamp): a copy with both the same counts once, whenever it arrives within the dedup horizon; the same event_id with another timestamp is another event. An event sent without a timestamp is its event_id: a resend counts once while the first copy is within the hot window of the aggregators (AGGREGATOR_HOT_WINDOW_MINUTES).',
    },
    event_name: { type: 'string', minLength: 1, maxLength: 255, pattern: '\\S' },
    external_customer_id: { type: 'string', minLength: 1, maxLength: 255 },
    customer_id: { type: 'string', maxLength: 255 },
    timestamp: {
      type: 'string', format: 'date-time',
      description: 'When the event happened (default: when ingest received it). Part of the event\'s identity: resend an event with the timestamp it was first sent with (exact at any age).',
    },
    source: { type: 'string', maxLength: 255 },
    properties: { type: 'object' },
  },
} as const

export const bulkSchema = {
  type: 'object',
  required: ['events'],
  additionalProperties: false,
  properties: {
    events: { type: 'array', minItems: 1, maxItems: MAX_EVENTS_PER_REQUEST, items: eventSchema },
  },
} as const

/** The 202 answers: the ids a client needs to resend the same events after an unclear failure. */
export const eventAcceptedSchema = {
  type: 'object',
  required: ['message', 'event_id'],
  properties: { message: { type: 'string' }, event_id: { type: 'string' } },
} as const

export const bulkAcceptedSchema = {
  type: 'object',
  required: ['message', 'count', 'batch_id'],
  properties: { message: { type: 'string' }, count: { type: 'integer' }, batch_id: { type: 'string' } },
} as const

export interface EventInput {
  event_id?: string
  event_name: string
  external_customer_id: string
  customer_id?: string
  timestamp?: string
  source?: string
  properties?: Record<string, unknown>
}
