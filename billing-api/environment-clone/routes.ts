// POST /environments/clone starts a clone (202 with the job id); GET
// /environments/clone-jobs/{job_id} shows its status and progress. The spec names the
// operation but not its path.
import type { FastifyInstance } from 'fastify'
import { typed } from '../http/typed-routes.js'
import { NotFoundError, ServiceUnavailableError, ValidationError } from '../../platform/errors.js'
import { requireRole } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { EnvironmentSchema } from '../tenants/tenant.entity.js'
import { planCloneRoutes } from './plan-clone.js'

const envId = { type: 'string', minLength: 1, maxLength: 100 } as const

const startBody = {
  type: 'object',
  required: ['target_environment_id'],
  additionalProperties: false,
  properties: {
    /** default: the request's environment */
    source_environment_id: envId,
    target_environment_id: envId,
  },
} as const

const jobParams = { type: 'object', required: ['job_id'], properties: { job_id: envId } } as const

const counts = {
  type: 'object',
  properties: Object.fromEntries(['meters', 'pricing_units', 'features', 'plans', 'prices', 'entitlements'].map((k) => [k, { type: 'integer' }])),
} as const

const jobView = {
  type: 'object',
  properties: {
    job_id: { type: 'string' },
    status: { type: 'string', enum: ['queued', 'running', 'completed', 'failed'] },
    source_environment_id: { type: 'string' },
    target_environment_id: { type: 'string' },
    progress: {
      type: ['object', 'null'],
      properties: {
        phase: { type: 'string' }, done: { type: 'integer' }, total: { type: 'integer' }, created: counts, existing: { type: 'integer' },
        warnings: { type: 'array', items: { type: 'string' } },
      },
    },
    attempts: { type: 'integer' },
    error: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const

export async function environmentCloneRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  planCloneRoutes(instance, ctx)
  const app = typed(instance)
  const queue = () => {
    if (!ctx.environmentClone) throw new ServiceUnavailableError('the environment clone queue is not configured in this process')
    return ctx.environmentClone
  }

  app.post('/environments/clone', { schema: { tags: ['environments'], body: startBody, response: { 202: jobView } } }, async (request, reply) => {
    requireRole(request, 'super_admin')
    const body = request.body
    const tenantId = request.auth.tenantId
    const source = body.source_environment_id ?? request.auth.environmentId
    if (source === body.target_environment_id) throw new ValidationError('target_environment_id must differ from the source environment', 'target_environment_id')
    const em = ctx.orm.em.fork()
    for (const id of [source, body.target_environment_id]) {
      // another tenant's environment answers like an unknown one
      if (!(await em.findOne(EnvironmentSchema, { id, tenant_id: tenantId, status: 'published' }))) throw new NotFoundError('environment', id)
    }
    const q = queue()
    const jobId = await q.enqueue({ tenant_id: tenantId, source_environment_id: source, target_environment_id: body.target_environment_id, actor: request.auth.userId })
    return reply.code(202).send(await q.status(tenantId, source, jobId))
  })

  app.get('/environments/clone-jobs/:job_id', { schema: { tags: ['environments'], params: jobParams, response: { 200: jobView } } }, async (request) => {
    return queue().status(request.auth.tenantId, request.auth.environmentId, request.params.job_id)
  })
}
