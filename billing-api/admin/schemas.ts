// JSON schemas of the admin API (requests and responses; the responses document the OpenAPI).
import { JOB_STATES } from './job-view.js'
import { QUEUE_NAMES } from './queues.js'

const isoOrNull = { type: ['string', 'null'], format: 'date-time' } as const

export const jobViewSchema = {
  type: 'object',
  required: ['queue', 'id', 'name', 'state', 'data', 'attempts_made', 'failed_reason', 'created_at', 'processed_at', 'finished_at'],
  properties: {
    queue: { type: 'string' },
    id: { type: 'string' },
    name: { type: 'string' },
    state: { type: 'string', enum: [...JOB_STATES, 'unknown'] },
    data: { type: 'object', additionalProperties: true },
    attempts_made: { type: 'integer' },
    return_value: { description: 'what the job returned (scheduler jobs: the number of items processed)' },
    failed_reason: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    processed_at: isoOrNull,
    finished_at: isoOrNull,
  },
} as const

const countsSchema = {
  type: 'object',
  required: [...JOB_STATES],
  properties: Object.fromEntries(JOB_STATES.map((s) => [s, { type: 'integer' }])),
} as const

export const queueStatusSchema = {
  type: 'object',
  required: ['queue', 'counts', 'recent_failures'],
  properties: {
    queue: { type: 'string' },
    counts: countsSchema,
    recent_failures: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'name', 'failed_reason', 'attempts_made', 'failed_at'],
        properties: {
          id: { type: 'string' }, name: { type: 'string' }, failed_reason: { type: 'string' },
          attempts_made: { type: 'integer' }, failed_at: isoOrNull,
        },
      },
    },
  },
} as const

export const queueParams = {
  type: 'object',
  required: ['queue'],
  properties: { queue: { type: 'string', enum: [...QUEUE_NAMES] } },
} as const

export const jobParams = {
  type: 'object',
  required: ['queue', 'id'],
  properties: { queue: { type: 'string', enum: [...QUEUE_NAMES] }, id: { type: 'string', minLength: 1, maxLength: 200 } },
} as const

export const failuresQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { failures: { type: 'integer', minimum: 0, maximum: 100, default: 10, description: 'recent failures to show per queue' } },
} as const

export const jobNameParams = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[a-z0-9-]+$' } },
} as const

export const triggerBody = {
  type: 'object',
  additionalProperties: false,
  properties: { tenant_id: { type: 'string', minLength: 1, maxLength: 100, description: 'run for this tenant only' } },
} as const

export const scheduledJobsSchema = {
  type: 'object',
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'every_ms', 'next_run_at'],
        properties: { name: { type: 'string' }, every_ms: { type: 'integer' }, next_run_at: isoOrNull },
      },
    },
  },
} as const

export const createTenantBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    key_environment: { type: 'string', enum: ['production', 'development'], default: 'production', description: 'the environment the first API key is bound to' },
  },
} as const

export const createdTenantSchema = {
  type: 'object',
  required: ['tenant_id', 'environments', 'user_id', 'api_key'],
  properties: {
    tenant_id: { type: 'string' },
    environments: {
      type: 'object',
      required: ['production', 'development'],
      properties: { production: { type: 'string' }, development: { type: 'string' } },
    },
    user_id: { type: 'string' },
    api_key: { type: 'string', description: 'shown once' },
  },
} as const

export const billingRunParams = {
  type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 200 } },
} as const

export const billingRunsQuery = {
  type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 } },
} as const

const int = { type: 'integer' } as const
export const billingRunSchema = {
  type: 'object',
  description: 'a billing run (job subscription-billing): done / total subscriptions, invoices, failures, rate and ETA',
  required: ['id', 'job_name', 'state', 'attempts', 'started_at', 'total', 'subscriptions', 'invoices', 'failures', 'rate', 'eta_seconds'],
  properties: {
    id: { type: 'string', description: '`subscription-billing:<scheduler job id>:<job created ms>`' },
    job_name: { type: 'string' },
    tenant_id: { type: ['string', 'null'] },
    state: { type: 'string', enum: ['running', 'completed', 'failed'] },
    attempts: int,
    started_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    finished_at: isoOrNull,
    watermark: { ...isoOrNull, description: 'the ingestion watermark the run billed up to' },
    total: { ...int, description: 'subscriptions due at the start (periods behind count again as they are billed)' },
    subscriptions: { ...int, description: 'subscription periods billed (done)' },
    invoices: int,
    conflicts: { ...int, description: 'invoices skipped because their idempotency key was taken' },
    batches: int,
    failures: { ...int, description: 'subscriptions whose invoice failed to compute: not advanced, billed by the next run' },
    rate: { type: 'number', description: 'subscriptions per second' },
    eta_seconds: { type: ['integer', 'null'] },
    recent_failures: { type: 'array', items: { type: 'object', properties: { subscription_id: { type: 'string' }, error: { type: 'string' } } } },
  },
} as const
