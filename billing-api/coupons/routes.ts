import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { iso, serializeBase } from '../db/common.js'
import { dateTime, idParams, listResponse, metadataSchema, nonNegativeDecimalString, paginationQuery } from '../http/schemas.js'
import { COUPON_DURATIONS, COUPON_STATUSES, COUPON_TYPES, type Coupon } from './coupon.entity.js'
import {
  archiveCoupon, createCoupon, getCoupon, listCoupons, updateCoupon,
  type CouponFilter, type CreateCouponInput, type UpdateCouponInput,
} from './service.js'

export function serializeCoupon(c: Coupon) {
  return {
    ...serializeBase(c),
    name: c.name,
    type: c.type,
    amount_off: c.amount_off,
    percentage_off: c.percentage_off,
    currency: c.currency,
    duration: c.duration,
    duration_in_periods: c.duration_in_periods,
    max_redemptions: c.max_redemptions,
    total_redemptions: c.total_redemptions,
    redeem_after: iso(c.redeem_after),
    redeem_before: iso(c.redeem_before),
    rules: c.rules,
  }
}

const name = { type: 'string', minLength: 1, maxLength: 255 } as const
const maxRedemptions = { type: ['integer', 'null'], minimum: 1 } as const

// Cross-field rules (type vs amount/percentage/currency, repeating vs duration_in_periods, the
// window's order) are checked in coupon-terms.ts, so each failure names its field.
const createBody = {
  type: 'object',
  required: ['name', 'type'],
  additionalProperties: false,
  properties: {
    name,
    type: { type: 'string', enum: COUPON_TYPES },
    amount_off: nonNegativeDecimalString,
    percentage_off: nonNegativeDecimalString,
    currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
    duration: { type: 'string', enum: COUPON_DURATIONS },
    duration_in_periods: { type: 'integer', minimum: 1 },
    max_redemptions: maxRedemptions,
    redeem_after: dateTime,
    redeem_before: dateTime,
    rules: { type: 'object' },
    metadata: metadataSchema,
  },
} as const

const updateBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name,
    metadata: metadataSchema,
    max_redemptions: maxRedemptions,
    redeem_before: { type: ['string', 'null'], format: 'date-time' },
  },
} as const

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...paginationQuery,
    status: { type: 'string', enum: COUPON_STATUSES, default: 'published' },
    type: { type: 'string', enum: COUPON_TYPES },
  },
} as const

export async function couponRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  const tags = ['coupons']


  app.post('/coupons', { schema: { tags, body: createBody } }, async (request, reply) => {
    const coupon = await createCoupon(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.body as CreateCouponInput)
    return reply.code(201).send(serializeCoupon(coupon))
  })

  app.get('/coupons', { schema: { tags, querystring: listQuery } }, async (request) => {
    const filter = request.query as CouponFilter
    const [items, total] = await listCoupons(ctx.orm.em.fork(), scopeOf(request), filter)
    return listResponse(items.map(serializeCoupon), total, filter)
  })

  app.get('/coupons/:id', { schema: { tags, params: idParams } }, async (request) => {
    return serializeCoupon(await getCoupon(ctx.orm.em.fork(), scopeOf(request), (request.params as { id: string }).id))
  })

  app.put('/coupons/:id', { schema: { tags, params: idParams, body: updateBody } }, async (request) => {
    const id = (request.params as { id: string }).id
    const coupon = await updateCoupon(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, id, request.body as UpdateCouponInput)
    return serializeCoupon(coupon)
  })

  app.delete('/coupons/:id', { schema: { tags, params: idParams } }, async (request, reply) => {
    await archiveCoupon(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, (request.params as { id: string }).id)
    return reply.code(204).send()
  })
}
