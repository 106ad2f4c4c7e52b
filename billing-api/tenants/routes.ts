import type { FastifyInstance } from 'fastify'
import { NotFoundError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import { requireRole } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { iso } from '../db/common.js'
import { addressProperties, idParams, metadataSchema } from '../http/schemas.js'
import { EnvironmentSchema, TenantSchema, type Address, type Environment, type Tenant, type TenantBillingDetails } from './tenant.entity.js'
import { typed } from '../http/typed-routes.js'
import { pageOf, ref } from '../http/response-schemas.js'

const ADDRESS_KEYS = ['address_line1', 'address_line2', 'address_city', 'address_state', 'address_postal_code', 'address_country'] as const

function serializeBillingDetails(b: TenantBillingDetails | null) {
  const address = b?.address ? Object.fromEntries(ADDRESS_KEYS.map((k) => [k, b.address?.[k] ?? null])) as Address : null
  return { address, email: b?.email ?? null, help_email: b?.help_email ?? null, phone: b?.phone ?? null }
}

function serializeTenant(t: Tenant) {
  return {
    id: t.id,
    name: t.name,
    status: t.status,
    billing_details: serializeBillingDetails(t.billing_details),
    metadata: t.metadata ?? {},
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  }
}

function serializeEnvironment(e: Environment) {
  return {
    id: e.id, tenant_id: e.tenant_id, name: e.name, type: e.type, status: e.status, metadata: e.metadata ?? {},
    created_at: iso(e.created_at), updated_at: iso(e.updated_at),
  }
}

const envName = { type: 'string', minLength: 1, maxLength: 100 } as const

// spec: TenantBillingDetails and the Address limits
const addressBody = {
  type: 'object',
  additionalProperties: false,
  properties: addressProperties,
} as const
const billingDetailsBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    address: addressBody,
    email: { type: 'string', format: 'email', maxLength: 255 },
    help_email: { type: 'string', format: 'email', maxLength: 255 },
    phone: { type: 'string', maxLength: 50 },
  },
} as const
const updateTenantBody = {
  type: 'object',
  additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1, maxLength: 255 }, billing_details: billingDetailsBody, metadata: metadataSchema },
} as const

export async function tenantRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.get('/tenants/:id', { schema: { response: { 200: ref('Tenant') }, tags: ['tenants'], params: idParams } }, async (request) => {
    const { id } = request.params
    // Another tenant's id answers exactly like an unknown one: existence is not leaked.
    if (id !== request.auth.tenantId) throw new NotFoundError('tenant', id)
    const tenant = await ctx.orm.em.fork().findOne(TenantSchema, { id })
    if (!tenant) throw new NotFoundError('tenant', id)
    return serializeTenant(tenant)
  })

  // The caller's own tenant (Flexprice's path): name, metadata and billing details, each replaced
  // when sent. An administrator's change, as an environment's.
  app.put('/tenants/update', { schema: { response: { 200: ref('Tenant') }, tags: ['tenants'], body: updateTenantBody } }, async (request) => {
    requireRole(request, 'super_admin')
    const em = ctx.orm.em.fork()
    const tenant = await em.findOne(TenantSchema, { id: request.auth.tenantId })
    if (!tenant) throw new NotFoundError('tenant', request.auth.tenantId)
    const { name, billing_details: billing, metadata } = request.body
    if (name !== undefined) tenant.name = name
    if (metadata !== undefined) tenant.metadata = metadata
    if (billing !== undefined) tenant.billing_details = billing
    await em.flush()
    return serializeTenant(tenant)
  })

  app.get('/environments', { schema: { response: { 200: pageOf(ref('Environment')) }, tags: ['environments'] } }, async (request) => {
    const envs = await ctx.orm.em
      .fork()
      .find(EnvironmentSchema, { tenant_id: request.auth.tenantId, status: 'published' }, { orderBy: { created_at: 'asc' } })
    return { items: envs.map(serializeEnvironment), pagination: { limit: envs.length, offset: 0, total: envs.length } }
  })

  // Renames an environment; its type (production or development) is fixed at creation.
  app.put(
    '/environments/:id',
    {
      schema: {
        response: { 200: ref('Environment') },
        tags: ['environments'],
        params: idParams,
        body: { type: 'object', additionalProperties: false, properties: { name: envName, metadata: metadataSchema } },
      },
    },
    async (request) => {
      requireRole(request, 'super_admin')
      const em = ctx.orm.em.fork()
      const env = await em.findOne(EnvironmentSchema, { id: request.params.id, tenant_id: request.auth.tenantId, status: 'published' })
      if (!env) throw new NotFoundError('environment', request.params.id)
      if (request.body.name !== undefined) env.name = request.body.name
      if (request.body.metadata !== undefined) env.metadata = request.body.metadata
      env.updated_by = request.auth.userId
      await em.flush()
      return serializeEnvironment(env)
    },
  )

  app.post(
    '/environments',
    {
      schema: {
        response: { 201: ref('Environment') },
        tags: ['environments'],
        body: {
          type: 'object',
          required: ['name', 'type'],
          additionalProperties: false,
          properties: {
            name: envName,
            type: { type: 'string', enum: ['production', 'development'] },
            metadata: metadataSchema,
          },
        },
      },
    },
    async (request, reply) => {
      requireRole(request, 'super_admin')
      const body = request.body
      const em = ctx.orm.em.fork()
      const env = em.create(EnvironmentSchema, {
        id: newId('env'), tenant_id: request.auth.tenantId, name: body.name, type: body.type, status: 'published',
        metadata: body.metadata ?? {}, created_by: request.auth.userId, updated_by: request.auth.userId,
      })
      await em.flush()
      return reply.code(201).send(serializeEnvironment(env))
    },
  )
}
