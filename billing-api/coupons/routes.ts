import type { FastifyInstance } from 'fastify'
import type { BillingContext } from '../context.js'
import { registerCrudRoutes } from '../http/crud-routes.js'
import { iso, serializeBase, pick } from '../db/common.js'
import { dateTime, metadataSchema, nonNegativeDecimalString, paginationQuery } from '../http/schemas.js'
import { COUPON_DURATIONS, COUPON_STATUSES, COUPON_TYPES, type Coupon } from './coupon.entity.js'
import {
  archiveCoupon, createCoupon, getCoupon, listCoupons, updateCoupon,
  type CouponFilter, type CreateCouponInput, type UpdateCouponInput,
} from './service.js'
import { cadenceOf, COUPON_CADENCES } from './coupon-terms.js'

export function serializeCoupon(c: Coupon) {
  return {
    ...serializeBase(c),
    ...pick(c, ['name', 'type', 'amount_off', 'percentage_off', 'currency', 'duration', 'duration_in_periods', 'max_redemptions', 'total_redemptions']),
    redeem_after: iso(c.redeem_after),
    redeem_before: iso(c.redeem_before),
    rules: c.rules,
    cadence: cadenceOf(c.duration),
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
    cadence: { type: 'string', enum: COUPON_CADENCES },
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
  registerCrudRoutes<Coupon, CreateCouponInput, UpdateCouponInput, CouponFilter>(app, ctx, {
    path: '/coupons',
    schema: 'Coupon',
    tags: ['coupons'],
    serialize: serializeCoupon,
    create: { body: createBody, run: createCoupon },
    list: { query: listQuery, run: listCoupons },
    get: getCoupon,
    update: { body: updateBody, run: updateCoupon },
    archive: archiveCoupon,
    archived: 'message',
  })
}
