import type { FastifyInstance } from 'fastify'
import { NotFoundError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import { scopeOf, type Scope } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { serializeBase } from '../db/common.js'
import { publishSystemEvent } from '../events/publish.js'
import { idParams, listResponse, metadataSchema, paginationQuery, type Page } from '../http/schemas.js'
import { CustomerSchema, type Customer } from './customer.entity.js'
import type { EntityManager } from '@mikro-orm/postgresql'

const ADDRESS_FIELDS = {
  address_line1: { type: 'string', maxLength: 255 },
  address_line2: { type: 'string', maxLength: 255 },
  address_city: { type: 'string', maxLength: 100 },
  address_state: { type: 'string', maxLength: 100 },
  address_postal_code: { type: 'string', maxLength: 20 },
  address_country: { type: 'string', maxLength: 100 },
} as const

const customerFields = {
  external_id: { type: 'string', minLength: 1, maxLength: 255 },
  name: { type: 'string', maxLength: 255 },
  email: { type: 'string', maxLength: 255 },
  ...ADDRESS_FIELDS,
  metadata: metadataSchema,
} as const

export function serializeCustomer(c: Customer) {
  return {
    ...serializeBase(c),
    external_id: c.external_id,
    name: c.name,
    email: c.email,
    address_line1: c.address_line1,
    address_line2: c.address_line2,
    address_city: c.address_city,
    address_state: c.address_state,
    address_postal_code: c.address_postal_code,
    address_country: c.address_country,
    integrations: [],
  }
}

export async function getCustomer(em: EntityManager, scope: Scope, id: string): Promise<Customer> {
  const c = await em.findOne(CustomerSchema, { id, ...scope, status: { $ne: 'deleted' } })
  if (!c) throw new NotFoundError('customer', id)
  return c
}

type CustomerInput = Partial<Omit<Customer, 'id'>> & { external_id: string }

export async function customerRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  app.post(
    '/customers',
    { schema: { tags: ['customers'], body: { type: 'object', required: ['external_id'], additionalProperties: false, properties: customerFields } } },
    async (request, reply) => {
      const body = request.body as CustomerInput
      const customer = await ctx.orm.em.fork().transactional(async (em) => {
        const c = em.create(CustomerSchema, {
          name: null, email: null, address_line1: null, address_line2: null, address_city: null, address_state: null,
          address_postal_code: null, address_country: null,
          ...body,
          id: newId('cust'),
          ...scopeOf(request),
          status: 'published',
          metadata: body.metadata ?? {},
          created_by: request.auth.userId,
          updated_by: request.auth.userId,
        } as any)
        await em.flush()
        // Same transaction as the customer: the event exists if and only if the customer does.
        publishSystemEvent(em, scopeOf(request), { event_name: 'customer.created', entity_type: 'customer', entity_id: c.id, payload: serializeCustomer(c) })
        return c
      })
      return reply.code(201).send(serializeCustomer(customer))
    },
  )

  app.get(
    '/customers',
    { schema: { tags: ['customers'], querystring: { type: 'object', properties: { ...paginationQuery, external_id: { type: 'string' } } } } },
    async (request) => {
      const q = request.query as Page & { external_id?: string }
      const where: Record<string, unknown> = { ...scopeOf(request), status: 'published' }
      if (q.external_id) where.external_id = q.external_id
      const [items, total] = await ctx.orm.em.fork().findAndCount(CustomerSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
      return listResponse(items.map(serializeCustomer), total, q)
    },
  )

  app.get('/customers/:id', { schema: { tags: ['customers'], params: idParams } }, async (request) => {
    return serializeCustomer(await getCustomer(ctx.orm.em.fork(), scopeOf(request), (request.params as { id: string }).id))
  })

  app.put(
    '/customers/:id',
    { schema: { tags: ['customers'], params: idParams, body: { type: 'object', additionalProperties: false, properties: customerFields } } },
    async (request) => {
      const em = ctx.orm.em.fork()
      const customer = await getCustomer(em, scopeOf(request), (request.params as { id: string }).id)
      em.assign(customer, { ...(request.body as object), updated_by: request.auth.userId } as any)
      await em.flush()
      return serializeCustomer(customer)
    },
  )

  app.delete('/customers/:id', { schema: { tags: ['customers'], params: idParams } }, async (request, reply) => {
    const em = ctx.orm.em.fork()
    const customer = await getCustomer(em, scopeOf(request), (request.params as { id: string }).id)
    customer.status = 'deleted'
    customer.updated_by = request.auth.userId
    await em.flush()
    return reply.code(204).send()
  })
}
