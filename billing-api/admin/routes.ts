// The operators' API under /v1/admin (ADMIN_TOKEN, not tenant API keys): the scheduler's jobs
// (list, run now), the state of every background queue with recent failures, retries, and
// tenant creation. Registered beside the tenant API (billing-api/app.ts), not inside it.
import type { FastifyInstance } from 'fastify'
import { errorStatuses } from '../../platform/error-responses.js'
import { ServiceUnavailableError } from '../../platform/errors.js'
import { JOB_CATALOGUE } from '../../platform/job-catalogue.js'
import type { BillingContext } from '../context.js'
import { createTenant } from '../tenants/index.js'
import { aggregatorRoutes } from './aggregators.js'
import { adminAuthHook } from './authenticate.js'
import { AdminQueues, QUEUE_NAMES } from './queues.js'
import {
  createdTenantSchema, createTenantBody, failuresQuery, jobNameParams, jobParams, jobViewSchema, queueParams,
  queueStatusSchema, scheduledJobsSchema, triggerBody, billingRunParams, billingRunSchema, billingRunsQuery,
} from './schemas.js'
import { NotFoundError } from '../../platform/errors.js'
import { billingRunView, listBillingRuns, readBillingRun } from '../billing/index.js'
import { typed } from '../http/typed-routes.js'

const tags = ['admin']
const security = [{ adminToken: [] }]
// Besides the statuses of every route (platform/error-responses.ts): the admin hook's 401, and 404 while the API is off.
const errors = errorStatuses(401, 404)

export async function adminRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  const token = ctx.config.adminToken
  let queues: AdminQueues | undefined
  if (token) {
    queues = AdminQueues.open(ctx.config)
    app.addHook('onClose', async () => queues?.close())
  }
  const q = (): AdminQueues => {
    if (!queues) throw new ServiceUnavailableError('the admin API is disabled')
    return queues
  }
  app.addHook('onRequest', adminAuthHook(token))

  aggregatorRoutes(instance, () => ctx.aggregatorControl, { tags, security, errors })

  app.get('/jobs', {
    schema: { tags, security, summary: 'the recurring jobs of the scheduler, with their cadence', response: { 200: scheduledJobsSchema, ...errors } },
  }, async () => ({ items: await q().scheduled((name) => JOB_CATALOGUE[name].everyMs(ctx)) }))

  app.post('/jobs/:name/runs', {
    schema: {
      tags, security, summary: 'run a scheduler job now (poll GET /v1/admin/queues/scheduler/jobs/{id})',
      params: jobNameParams, body: triggerBody, response: { 202: jobViewSchema, ...errors },
    },
  }, async (request, reply) => {
    const { name } = request.params
    const body = (request.body ?? {}) as { tenant_id?: string }
    const view = await q().trigger(name, body.tenant_id ? { tenant_id: body.tenant_id } : {})
    return reply.code(202).send(view)
  })

  // The progress of billing runs (billing/billing-runs.ts): one record per run, moved by each batch's commit.
  app.get('/billing-runs', {
    schema: {
      tags, security, summary: 'the latest billing runs, newest first: done / total, invoices, failures, rate, ETA', querystring: billingRunsQuery,
      response: { 200: { type: 'object', required: ['items'], properties: { items: { type: 'array', items: billingRunSchema } } }, ...errors },
    },
  }, async (request) => {
    q()
    const em = ctx.orm.em.fork()
    const runs = await listBillingRuns(em, request.query.limit ?? 10)
    return { items: await Promise.all(runs.map((r) => billingRunView(em, r))) }
  })

  app.get('/billing-runs/:id', {
    schema: { tags, security, summary: 'one billing run (id: subscription-billing:<scheduler job id>[:<job created ms>]; without the time, the newest run of that job id)', params: billingRunParams, response: { 200: billingRunSchema, ...errors } },
  }, async (request) => {
    q()
    const em = ctx.orm.em.fork()
    const run = await readBillingRun(em, request.params.id)
    if (!run) throw new NotFoundError('billing run', request.params.id)
    return billingRunView(em, run)
  })

  app.get('/queues', {
    schema: {
      tags, security, summary: 'every background queue: jobs per state and recent failures', querystring: failuresQuery,
      response: { 200: { type: 'object', required: ['items'], properties: { items: { type: 'array', items: queueStatusSchema } } }, ...errors },
    },
  }, async (request) => {
    const { failures } = request.query
    return { items: await Promise.all(QUEUE_NAMES.map((name) => q().status(name, failures))) }
  })

  app.get('/queues/:queue', {
    schema: { tags, security, summary: 'one queue: jobs per state and recent failures', params: queueParams, querystring: failuresQuery, response: { 200: queueStatusSchema, ...errors } },
  }, async (request) => {
    const { queue } = request.params
    const { failures } = request.query
    return q().status(queue, failures)
  })

  app.get('/queues/:queue/jobs/:id', {
    schema: { tags, security, summary: 'one job: state, attempts, result or failure reason', params: jobParams, response: { 200: jobViewSchema, ...errors } },
  }, async (request) => {
    const { queue, id } = request.params
    return q().get(queue, id)
  })

  app.post('/queues/:queue/jobs/:id/retry', {
    schema: { tags, security, summary: 'retry a failed job', params: jobParams, response: { 200: jobViewSchema, ...errors } },
  }, async (request) => {
    const { queue, id } = request.params
    return q().retry(queue, id)
  })

  app.post('/queues/:queue/retry-failed', {
    schema: {
      tags, security, summary: 'retry every failed job of a queue', params: queueParams,
      response: { 200: { type: 'object', required: ['queue', 'retried'], properties: { queue: { type: 'string' }, retried: { type: 'integer' } } }, ...errors },
    },
  }, async (request) => {
    const { queue } = request.params
    return { queue, retried: await q().retryFailed(queue) }
  })

  app.post('/tenants', {
    schema: {
      tags, security, summary: 'create a tenant with its environments, a super_admin service account and a first API key',
      body: createTenantBody, response: { 201: createdTenantSchema, ...errors },
    },
  }, async (request, reply) => {
    const body = request.body
    const t = await createTenant(ctx.orm.em.fork(), { name: body.name, keyEnvironment: body.key_environment }, ctx.config.apiKeyHashing)
    return reply.code(201).send({ tenant_id: t.tenantId, environments: t.environments, user_id: t.userId, api_key: t.apiKey })
  })
}
