// Service accounts (users) and their API keys (secrets). Administration needs super_admin.
import type { FastifyInstance } from 'fastify'
import { LockMode } from '@mikro-orm/core'
import { InvalidOperationError, NotFoundError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { BillingContext } from '../context.js'
import { iso } from '../db/common.js'
import { EnvironmentSchema } from '../tenants/tenant.entity.js'
import { dateTime, idParams, listResponse, metadataSchema, paginationQuery } from '../http/schemas.js'
import { generateApiKey } from './api-key.js'
import { ApiKeySchema, type ApiKey } from './api-key.entity.js'
import { requireRole } from './authenticate.js'
import { UserSchema, type User } from './user.entity.js'
import { typed } from '../http/typed-routes.js'
import { KEY_SCOPES, READS } from '../http/route-access.js'
import { retireRecord } from '../db/scoped-records.js'
import { noContent, pageOf, ref } from '../http/response-schemas.js'

const ROLES = ['super_admin', 'member'] as const

function serializeUser(u: User) {
  return {
    id: u.id, tenant_id: u.tenant_id, name: u.name, email: u.email, type: u.type, roles: u.roles, status: u.status,
    metadata: u.metadata ?? {}, created_at: iso(u.created_at), updated_at: iso(u.updated_at),
    created_by: u.created_by ?? null, updated_by: u.updated_by ?? null, tenant: null,
  }
}

function serializeKey(k: ApiKey) {
  return {
    id: k.id, tenant_id: k.tenant_id, environment_id: k.environment_id, user_id: k.user_id, name: k.name,
    display_id: k.display_id, scope: k.scope, status: k.status, expires_at: iso(k.expires_at), last_used_at: iso(k.last_used_at),
    created_at: iso(k.created_at), updated_at: iso(k.updated_at), type: 'private_key', provider: null, roles: null, user_type: null,
  }
}

const userBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    roles: { type: 'array', items: { type: 'string', enum: ROLES }, uniqueItems: true },
    metadata: metadataSchema,
  },
} as const

/** The API creates service accounts only (people sign up): Flexprice's `type` is accepted with that value. */
const createUserBody = { ...userBody, properties: { ...userBody.properties, type: { type: 'string', enum: ['service_account'] } } } as const

const userSearchBody = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paginationQuery, type: { type: 'string', enum: ['user', 'service_account'] }, status: { type: 'string', enum: ['published', 'archived'], default: 'published' } },
} as const

export async function authRoutes(instance: FastifyInstance, ctx: BillingContext, invalidateKeys: () => void): Promise<void> {
  const app = typed(instance)
  const findUser = async (tenantId: string, id: string) => {
    const user = await ctx.orm.em.fork().findOne(UserSchema, { id, tenant_id: tenantId, status: { $ne: 'deleted' } })
    if (!user) throw new NotFoundError('user', id)
    return user
  }

  app.get('/users', { schema: { response: { 200: pageOf(ref('User')) }, tags: ['users'] } }, async (request) => {
    const users = await ctx.orm.em.fork().find(UserSchema, { tenant_id: request.auth.tenantId, status: 'published' }, { orderBy: { created_at: 'asc' } })
    return { items: users.map(serializeUser), pagination: { limit: users.length, offset: 0, total: users.length } }
  })

  // The user the request's API key belongs to.
  app.get('/users/me', { schema: { response: { 200: ref('User') }, tags: ['users'] } }, async (request) => {
    return serializeUser(await findUser(request.auth.tenantId, request.auth.userId))
  })

  app.post('/users/search', { config: READS, schema: { response: { 200: pageOf(ref('User')) }, tags: ['users'], body: userSearchBody } }, async (request) => {
    const q = request.body
    const where = { tenant_id: request.auth.tenantId, status: q.status ?? 'published', ...(q.type ? { type: q.type } : {}) }
    const [users, total] = await ctx.orm.em.fork().findAndCount(UserSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
    return listResponse(users.map(serializeUser), total, q)
  })

  app.get('/users/:id', { schema: { response: { 200: ref('User') }, tags: ['users'], params: idParams } }, async (request) => {
    return serializeUser(await findUser(request.auth.tenantId, request.params.id))
  })

  app.post('/users', { schema: { response: { 201: ref('User') }, tags: ['users'], body: createUserBody } }, async (request, reply) => {
    requireRole(request, 'super_admin')
    const body = request.body
    const em = ctx.orm.em.fork()
    const user = em.create(UserSchema, {
      id: newId('user'), tenant_id: request.auth.tenantId, name: body.name ?? null, email: null, type: 'service_account',
      roles: body.roles ?? ['member'], status: 'published', metadata: body.metadata ?? {},
      created_by: request.auth.userId, updated_by: request.auth.userId,
    })
    await em.flush()
    return reply.code(201).send(serializeUser(user))
  })

  app.put('/users/:id', { schema: { response: { 200: ref('User') }, tags: ['users'], params: idParams, body: userBody } }, async (request) => {
    requireRole(request, 'super_admin')
    const body = request.body
    const em = ctx.orm.em.fork()
    const user = await em.findOne(UserSchema, { id: request.params.id, tenant_id: request.auth.tenantId, status: 'published' })
    if (!user) throw new NotFoundError('user', request.params.id)
    if (body.name !== undefined) user.name = body.name
    if (body.metadata !== undefined) user.metadata = body.metadata
    if (body.roles !== undefined) user.roles = body.roles
    user.updated_by = request.auth.userId
    await em.flush()
    invalidateKeys()
    return serializeUser(user)
  })

  app.delete('/users/:id', { schema: { response: { 204: noContent }, tags: ['users'], params: idParams } }, async (request, reply) => {
    requireRole(request, 'super_admin')
    const { id } = request.params
    await ctx.orm.em.fork().transactional(async (em) => {
      const user = await em.findOne(UserSchema, { id, tenant_id: request.auth.tenantId, status: 'published' }, { lockMode: LockMode.PESSIMISTIC_WRITE })
      if (!user) throw new NotFoundError('user', id)
      const activeKeys = await em.count(ApiKeySchema, {
        tenant_id: request.auth.tenantId, user_id: id, status: 'published',
        $or: [{ expires_at: null }, { expires_at: { $gt: ctx.clock.now() } }],
      })
      if (activeKeys > 0) {
        throw new InvalidOperationError(`user ${id} has ${activeKeys} active API key(s); revoke them before archiving the user`)
      }
      user.status = 'archived'
      user.updated_by = request.auth.userId
    })
    return reply.code(204).send()
  })

  app.get(
    '/secrets/api/keys',
    {
      schema: {
        response: { 200: pageOf(ref('ApiKey')) },
        tags: ['secrets'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { user_id: { type: 'string' }, not_expired_at: dateTime },
        },
      },
    },
    async (request) => {
      const q = request.query
      const where: Record<string, unknown> = { tenant_id: request.auth.tenantId, status: 'published' }
      if (q.user_id) where.user_id = q.user_id
      if (q.not_expired_at) where.$or = [{ expires_at: null }, { expires_at: { $gt: new Date(q.not_expired_at) } }]
      const keys = await ctx.orm.em.fork().find(ApiKeySchema, where, { orderBy: { created_at: 'asc' } })
      return { items: keys.map(serializeKey), pagination: { limit: keys.length, offset: 0, total: keys.length } }
    },
  )

  app.get(
    '/secrets/api/keys/current',
    {
      schema: {
        tags: ['secrets'],
        summary: 'the key this request is signed with: its tenant, environment and scope (a console shows what it may do)',
        response: {
          200: {
            type: 'object', additionalProperties: false, required: ['id', 'tenant_id', 'environment_id', 'scope'],
            properties: { id: { type: 'string' }, tenant_id: { type: 'string' }, environment_id: { type: 'string' }, scope: { type: 'string', enum: KEY_SCOPES } },
          },
        },
      },
    },
    async (request) => ({ id: request.auth.apiKeyId, tenant_id: request.auth.tenantId, environment_id: request.auth.environmentId, scope: request.auth.scope }),
  )

  app.post(
    '/secrets/api/keys',
    {
      schema: {
        response: { 201: ref('CreatedApiKey') },
        tags: ['secrets'],
        body: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 255 },
            user_id: { type: 'string' },
            environment_id: { type: 'string' },
            expires_at: dateTime,
            /** read_only: reads everything of its environment, changes nothing */
            scope: { type: 'string', enum: KEY_SCOPES, default: 'full' },
            // Flexprice's names: keys here are secret keys (private_key), and a service account is a user
            type: { type: 'string', enum: ['private_key'] },
            service_account_id: { type: 'string' },
          },
        },
      },
    },
    async (request, reply) => {
      requireRole(request, 'super_admin')
      const body = request.body
      const em = ctx.orm.em.fork()
      if (body.user_id !== undefined && body.service_account_id !== undefined && body.user_id !== body.service_account_id) {
        throw new ValidationError('service_account_id: names another user than user_id', 'service_account_id')
      }
      const userId = body.user_id ?? body.service_account_id ?? request.auth.userId
      await findUser(request.auth.tenantId, userId)
      const environmentId = body.environment_id ?? request.auth.environmentId
      const env = await em.findOne(EnvironmentSchema, { id: environmentId, tenant_id: request.auth.tenantId, status: 'published' })
      if (!env) throw new NotFoundError('environment', environmentId)
      const expiresAt = body.expires_at ? new Date(body.expires_at) : null
      if (expiresAt && expiresAt <= ctx.clock.now()) throw new ValidationError('expires_at must be in the future', 'expires_at')
      const key = generateApiKey(ctx.config.apiKeyHashing)
      const row = em.create(ApiKeySchema, {
        id: newId('key'), tenant_id: request.auth.tenantId, environment_id: environmentId, user_id: userId, name: body.name,
        key_hash: key.hash, key_hash_scheme: key.scheme, display_id: key.displayId, scope: body.scope ?? 'full', status: 'published', expires_at: expiresAt, last_used_at: null,
        metadata: {}, created_by: request.auth.userId, updated_by: request.auth.userId,
      })
      await em.flush()
      // The plaintext key is returned once, here, and never again.
      return reply.code(201).send({ ...serializeKey(row), api_key: key.plaintext, secret: serializeKey(row) })
    },
  )

  app.delete('/secrets/api/keys/:id', { schema: { response: { 204: noContent }, tags: ['secrets'], params: idParams } }, async (request, reply) => {
    requireRole(request, 'super_admin')
    const { id } = request.params
    const em = ctx.orm.em.fork()
    const key = await em.findOne(ApiKeySchema, { id, tenant_id: request.auth.tenantId, status: 'published' })
    if (!key) throw new NotFoundError('api key', id)
    await retireRecord(em, key, 'archived', request.auth.userId)
    invalidateKeys()
    return reply.code(204).send()
  })
}
