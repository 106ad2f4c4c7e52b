// Webhook endpoints (secret shown once, obscured afterwards; deleting or disabling one cancels
// its pending deliveries, endpoint-lifecycle.ts), deliveries with their attempts, and the manual
// retry of a failed or cancelled delivery.
import type { FastifyInstance } from 'fastify'
import { InvalidOperationError, NotFoundError, ServiceUnavailableError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import { validateOutboundUrl } from '../../platform/outbound-url-guard.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { iso, serializeBase } from '../db/common.js'
import { idParams, listResponse, metadataSchema, paginationQuery } from '../http/schemas.js'
import { obscureSecret } from '../http/obscure-secret.js'
import { newWebhookSecret } from './signature.js'
import { deleteEndpoint, setEndpointDisabled } from './endpoint-lifecycle.js'
import { endpointGone } from './deliver.js'
import { openWebhookSecret, sealWebhookSecret } from './secret-at-rest.js'
import { WebhookAttemptSchema, WebhookDeliverySchema, WebhookEndpointSchema, type WebhookDelivery, type WebhookEndpoint } from './webhook.entity.js'
import { typed } from '../http/typed-routes.js'
import { noContent, pageOf, ref } from '../http/response-schemas.js'
import { webhookDeliveryDetailSchema } from './response-schemas.js'

const serializeEndpoint = (e: WebhookEndpoint, secret: string, revealSecret = false) => ({
  ...serializeBase(e), url: e.url, event_types: e.event_types, description: e.description,
  disabled: e.disabled_at !== null, disabled_at: iso(e.disabled_at),
  secret: revealSecret ? secret : obscureSecret(secret),
})

const serializeDelivery = (d: WebhookDelivery) => ({
  ...serializeBase(d), endpoint_id: d.endpoint_id, event_id: d.event_id, event_name: d.event_name, delivery_status: d.delivery_status,
  attempts: d.attempts, last_status_code: d.last_status_code, last_error: d.last_error, delivered_at: iso(d.delivered_at),
  cancel_reason: d.cancel_reason,
})

export async function webhookRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  const tags = ['webhooks']
  const id = (params: unknown) => (params as { id: string }).id
  const secretOf = (e: WebhookEndpoint) => openWebhookSecret(ctx.config.integrations, e).value

  app.post(
    '/webhooks/endpoints',
    {
      schema: {
        response: { 201: ref('WebhookEndpoint') },
        tags,
        body: {
          type: 'object',
          required: ['url'],
          additionalProperties: false,
          properties: {
            url: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048 },
            event_types: { type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 100 } },
            description: { type: 'string', maxLength: 1000 },
            metadata: metadataSchema,
          },
        },
      },
    },
    async (request, reply) => {
      const body = request.body
      await validateOutboundUrl(ctx.config.outbound, body.url, 'url')
      const em = ctx.orm.em.fork()
      const endpointId = newId('wh')
      const secret = newWebhookSecret()
      const endpoint = em.create(WebhookEndpointSchema, {
        id: endpointId, ...scopeOf(request), url: body.url, event_types: body.event_types ?? [],
        secret: null, secret_encrypted: sealWebhookSecret(ctx.config.integrations, { id: endpointId, ...scopeOf(request) }, secret),
        description: body.description ?? null, disabled_at: null, status: 'published', metadata: body.metadata ?? {},
        created_by: request.auth.userId, updated_by: request.auth.userId,
      })
      await em.flush()
      return reply.code(201).send(serializeEndpoint(endpoint, secret, true))
    },
  )

  app.get('/webhooks/endpoints', { schema: { response: { 200: pageOf(ref('WebhookEndpoint')) }, tags, querystring: { type: 'object', properties: paginationQuery } } }, async (request) => {
    const q = request.query
    const [items, total] = await ctx.orm.em.fork().findAndCount(WebhookEndpointSchema, { ...scopeOf(request), status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
    return listResponse(items.map((e) => serializeEndpoint(e, secretOf(e))), total, q)
  })

  app.get('/webhooks/endpoints/:id', { schema: { response: { 200: ref('WebhookEndpoint') }, tags, params: idParams } }, async (request) => {
    const endpoint = await ctx.orm.em.fork().findOne(WebhookEndpointSchema, { id: id(request.params), ...scopeOf(request), status: 'published' })
    if (!endpoint) throw new NotFoundError('webhook endpoint', id(request.params))
    return serializeEndpoint(endpoint, secretOf(endpoint))
  })

  app.delete('/webhooks/endpoints/:id', {
    schema: { response: { 204: noContent }, tags, params: idParams, summary: 'delete an endpoint; its PENDING deliveries become CANCELLED (endpoint_deleted) and are never attempted again' },
  }, async (request, reply) => {
    await deleteEndpoint(ctx.orm.em.fork(), scopeOf(request), id(request.params), request.auth.userId)
    return reply.code(204).send()
  })

  for (const [action, disabled] of [['disable', true], ['enable', false]] as const) {
    app.post(`/webhooks/endpoints/:id/${action}`, {
      schema: {
        tags, params: idParams, response: { 200: ref('WebhookEndpoint') },
        summary: disabled
          ? 'disable an endpoint: no new deliveries, its PENDING ones become CANCELLED (endpoint_disabled)'
          : 'enable a disabled endpoint: events from now on are delivered; cancelled deliveries stay CANCELLED (POST /webhooks/{id}/retry sends one again)',
      },
    }, async (request) => {
      const { endpoint } = await setEndpointDisabled(ctx.orm.em.fork(), ctx.clock, scopeOf(request), id(request.params), disabled, request.auth.userId)
      return serializeEndpoint(endpoint, secretOf(endpoint))
    })
  }

  app.get(
    '/webhooks/deliveries',
    { schema: { response: { 200: pageOf(ref('WebhookDelivery')) }, tags, querystring: { type: 'object', properties: { ...paginationQuery, endpoint_id: { type: 'string' }, delivery_status: { type: 'string', enum: ['PENDING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] } } } } },
    async (request) => {
      const q = request.query
      const where: Record<string, unknown> = { ...scopeOf(request) }
      if (q.endpoint_id) where.endpoint_id = q.endpoint_id
      if (q.delivery_status) where.delivery_status = q.delivery_status
      const [items, total] = await ctx.orm.em.fork().findAndCount(WebhookDeliverySchema, where, { orderBy: { created_at: 'desc', id: 'desc' }, limit: q.limit, offset: q.offset })
      return listResponse(items.map(serializeDelivery), total, q)
    },
  )

  app.get('/webhooks/deliveries/:id', { schema: { response: { 200: webhookDeliveryDetailSchema }, tags, params: idParams } }, async (request) => {
    const em = ctx.orm.em.fork()
    const delivery = await em.findOne(WebhookDeliverySchema, { id: id(request.params), ...scopeOf(request) })
    if (!delivery) throw new NotFoundError('webhook delivery', id(request.params))
    const attempts = await em.find(WebhookAttemptSchema, { delivery_id: delivery.id, tenant_id: delivery.tenant_id }, { orderBy: { attempt: 'asc' } })
    return {
      ...serializeDelivery(delivery),
      attempt_log: attempts.map((a) => ({ attempt: a.attempt, status_code: a.status_code, latency_ms: a.latency_ms, error: a.error, created_at: iso(a.created_at) })),
    }
  })

  app.post('/webhooks/:id/retry', { schema: { response: { 202: ref('WebhookDelivery') }, tags, params: idParams } }, async (request, reply) => {
    if (!ctx.webhooks) throw new ServiceUnavailableError('webhook delivery queue is not configured in this process')
    const em = ctx.orm.em.fork()
    const delivery = await em.findOne(WebhookDeliverySchema, { id: id(request.params), ...scopeOf(request) })
    if (!delivery) throw new NotFoundError('webhook delivery', id(request.params))
    if (delivery.delivery_status === 'SUCCEEDED') throw new InvalidOperationError(`webhook delivery ${delivery.id} already succeeded`)
    const endpoint = await em.findOne(WebhookEndpointSchema, { id: delivery.endpoint_id, ...scopeOf(request) })
    const gone = endpoint ? endpointGone(endpoint) : 'endpoint_deleted'
    if (gone) {
      throw new InvalidOperationError(`webhook endpoint ${delivery.endpoint_id} is ${gone === 'endpoint_deleted' ? 'deleted' : 'disabled; enable it first'}`)
    }
    delivery.delivery_status = 'PENDING'
    delivery.cancel_reason = null
    await em.flush()
    await ctx.webhooks.enqueue([delivery.id])
    return reply.code(202).send(serializeDelivery(delivery))
  })
}
