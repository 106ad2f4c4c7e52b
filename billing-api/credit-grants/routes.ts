import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { registerCrudRoutes } from '../http/crud-routes.js'
import { RECORD_STATUSES } from '../http/metadata-filter.js'
import { dateTime, idParams, listResponse, metadataSchema, nonNegativeDecimalString, paginationQuery, type Page } from '../http/schemas.js'
import { CREDIT_GRANT_PERIODS, EXPIRATION_DURATION_UNITS, type CreditGrant } from './credit-grant.entity.js'
import { serializeApplication, serializeCreditGrant } from './serialize.js'
import {
  archiveCreditGrant, createCreditGrant, getCreditGrant, pageCreditGrants, updateCreditGrant,
  type CreditGrantFilter, type CreditGrantInput, type CreditGrantUpdate,
} from './service.js'
import { pageCustomerUpcomingGrants, pageUpcomingGrants } from './upcoming.js'
import { findInScope } from '../db/scoped-records.js'
import { PlanSchema } from '../plans/plan.entity.js'
import { CREDIT_GRANT_CADENCES, CREDIT_GRANT_SCOPES } from './cadence-scope.js'
import { typed } from '../http/typed-routes.js'
import { pageOf, ref } from '../http/response-schemas.js'

const name = { type: 'string', minLength: 1, maxLength: 255 } as const
const id = { type: 'string', minLength: 1, maxLength: 100 } as const

const createBody = {
  type: 'object',
  required: ['name', 'credits', 'period'],
  additionalProperties: false,
  properties: {
    name,
    plan_id: id,
    subscription_id: id,
    credits: nonNegativeDecimalString,
    conversion_rate: nonNegativeDecimalString,
    topup_conversion_rate: nonNegativeDecimalString,
    credit_grant_anchor: dateTime,
    start_date: dateTime,
    end_date: dateTime,
    expiration_duration: { type: 'integer', minimum: 0 },
    expiration_duration_unit: { type: 'string', enum: EXPIRATION_DURATION_UNITS },
    period: { type: 'string', enum: CREDIT_GRANT_PERIODS },
    period_count: { type: 'integer', minimum: 1 },
    priority: { type: 'integer' },
    metadata: metadataSchema,
    cadence: { type: 'string', enum: CREDIT_GRANT_CADENCES },
    scope: { type: 'string', enum: CREDIT_GRANT_SCOPES },
  },
} as const

const updateBody = { type: 'object', additionalProperties: false, properties: { name, metadata: metadataSchema } } as const

const listQuery = {
  type: 'object',
  properties: { ...paginationQuery, plan_id: id, subscription_id: id, status: { type: 'string', enum: RECORD_STATUSES, default: 'published' } },
} as const

const upcomingQuery = { type: 'object', properties: { ...paginationQuery } } as const
const pageQuery = upcomingQuery

export async function creditGrantRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  const em = () => ctx.orm.em.fork()
  const grantId = (params: unknown) => (params as { id: string }).id

  registerCrudRoutes<CreditGrant, CreditGrantInput, CreditGrantUpdate, CreditGrantFilter & Page>(app, ctx, {
    path: '/creditgrants',
    schema: 'CreditGrant',
    tags: ['credit-grants'],
    serialize: serializeCreditGrant,
    create: { body: createBody, run: createCreditGrant },
    list: { query: listQuery, run: pageCreditGrants },
    get: getCreditGrant,
    update: { body: updateBody, run: updateCreditGrant },
    archive: archiveCreditGrant,
    archived: 'message',
  })

  app.get('/plans/:id/creditgrants', { schema: { response: { 200: pageOf(ref('CreditGrant')) }, tags: ['credit-grants'], params: idParams, querystring: pageQuery } }, async (request) => {
    const page = request.query
    const planId = grantId(request.params)
    await findInScope(em(), PlanSchema, scopeOf(request), planId, 'plan')
    const { items, total } = await pageCreditGrants(em(), scopeOf(request), { ...page, plan_id: planId })
    return listResponse(items.map(serializeCreditGrant), total, page)
  })

  // The subscription's upcoming grant applications (upcoming.ts); registered here, beside the
  // grants, rather than in subscriptions/.
  app.get('/customers/:id/grants/upcoming', { schema: { response: { 200: pageOf(ref('CreditGrantApplication')) }, tags: ['credit-grants'], params: idParams, querystring: upcomingQuery } }, async (request) => {
    const page = request.query
    const { items, total } = await pageCustomerUpcomingGrants(em(), ctx.clock, scopeOf(request), grantId(request.params), page)
    return listResponse(items.map(serializeApplication), total, page)
  })

  app.get('/subscriptions/:id/grants/upcoming', { schema: { response: { 200: pageOf(ref('CreditGrantApplication')) }, tags: ['credit-grants'], params: idParams, querystring: upcomingQuery } }, async (request) => {
    const page = request.query
    const { items, total } = await pageUpcomingGrants(em(), ctx.clock, scopeOf(request), grantId(request.params), page)
    return listResponse(items.map(serializeApplication), total, page)
  })
}
