import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { iso, serializeBase } from '../db/common.js'
import { dateTime, idParams, metadataSchema } from '../http/schemas.js'
import type { CouponAssociation } from './coupon-association.entity.js'
import { createCouponAssociation, deleteCouponAssociation, listCouponAssociations } from './coupon-association.service.js'
import { typed } from '../http/typed-routes.js'
import { itemsOf, noContent, ref } from '../http/response-schemas.js'

export function serializeCouponAssociation(a: CouponAssociation) {
  return {
    ...serializeBase(a), coupon_id: a.coupon_id, subscription_id: a.subscription_id,
    subscription_line_item_id: a.subscription_line_item_id, subscription_phase_id: a.subscription_phase_id,
    start_date: a.start_date.toISOString(), end_date: iso(a.end_date),
  }
}

const id = { type: 'string', minLength: 1, maxLength: 255 } as const

export async function couponAssociationRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post('/coupon_associations', {
    schema: {
      response: { 201: ref('CouponAssociation') },
      tags: ['coupons'],
      body: {
        type: 'object', required: ['coupon_id', 'subscription_id'], additionalProperties: false,
        properties: { coupon_id: id, subscription_id: id, subscription_line_item_id: id, start_date: dateTime, end_date: dateTime, metadata: metadataSchema },
      },
    },
  }, async (request, reply) => {
    const a = await createCouponAssociation(ctx.orm.em.fork(), ctx.clock, scopeOf(request), request.auth.userId, request.body)
    return reply.code(201).send(serializeCouponAssociation(a))
  })

  app.get('/coupon_associations', {
    schema: { response: { 200: itemsOf(ref('CouponAssociation')) }, tags: ['coupons'], querystring: { type: 'object', required: ['subscription_id'], additionalProperties: false, properties: { subscription_id: id } } },
  }, async (request) => {
    const items = await listCouponAssociations(ctx.orm.em.fork(), scopeOf(request), (request.query).subscription_id)
    return { items: items.map(serializeCouponAssociation) }
  })

  app.delete('/coupon_associations/:id', { schema: { response: { 204: noContent }, tags: ['coupons'], params: idParams } }, async (request, reply) => {
    await deleteCouponAssociation(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.params.id)
    return reply.code(204).send()
  })
}
