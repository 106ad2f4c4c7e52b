// User signup (spec: "user signup accepts metadata (map)"; its path is not shown): a new tenant
// with its two environments, the signing-up user (super_admin) and a first API key, shown once.
// No API key is needed, so it is off unless SIGNUP_ENABLED=true, and limited per source address
// (SIGNUP_LIMIT per SIGNUP_WINDOW_SECONDS, shared by every process through Redis).
import type { FastifyInstance } from 'fastify'
import { typed } from '../http/typed-routes.js'
import { NotFoundError } from '../../platform/errors.js'
import type { BillingContext } from '../context.js'
import { metadataSchema } from '../http/schemas.js'
import { createTenant } from './create-tenant.js'
import { signupSchema } from './response-schemas.js'
import { errorStatuses } from '../../platform/error-responses.js'

const body = {
  type: 'object',
  required: ['tenant_name', 'email'],
  additionalProperties: false,
  properties: {
    tenant_name: { type: 'string', minLength: 1, maxLength: 255 },
    name: { type: 'string', minLength: 1, maxLength: 255 },
    email: { type: 'string', format: 'email', maxLength: 320 },
    metadata: metadataSchema,
  },
} as const

export async function signupRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post('/signup', { schema: { response: { 201: signupSchema, ...errorStatuses(404) }, tags: ['users'], body, security: [] } }, async (request, reply) => {
    // disabled: answers like a route that does not exist
    if (!ctx.config.signupEnabled) throw new NotFoundError('route', 'POST /v1/signup')
    await ctx.abuse?.admit('signup', request.ip)
    const b = request.body
    const t = await createTenant(ctx.orm.em.fork(), {
      name: b.tenant_name,
      admin: { name: b.name ?? null, email: b.email, type: 'user', metadata: b.metadata ?? {} },
    }, ctx.config.apiKeyHashing)
    return reply.code(201).send({
      tenant_id: t.tenantId,
      user_id: t.userId,
      environments: t.environments,
      /** bound to the production environment; shown once */
      api_key: t.apiKey,
    })
  })
}
