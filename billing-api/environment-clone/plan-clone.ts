// POST /plans/{id}/clone (Flexprice's SDK): a published plan copied within its environment under
// a new name and lookup key, with its published prices, its entitlements and its plan credit
// grants, in one transaction. The copies keep every value and the price sequences; price lookup
// keys are not copied (they are unique per environment). Subscriptions stay on the source plan.
import type { FastifyInstance } from 'fastify'
import type { EntityManager } from '@mikro-orm/postgresql'
import { newId } from '../../platform/ids.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { CreditGrantSchema } from '../credit-grants/credit-grant.entity.js'
import { findInScope } from '../db/scoped-records.js'
import type { Scope } from '../db/scope.js'
import { assertLookupKeyFree } from '../db/lookup-key.js'
import { EntitlementSchema } from '../entitlements/entitlement.entity.js'
import { descriptionSchema, lookupKeySchema, nameSchema } from '../http/catalog-schemas.js'
import { idParams, metadataSchema } from '../http/schemas.js'
import { ref } from '../http/response-schemas.js'
import { typed } from '../http/typed-routes.js'
import { ValidationError } from '../../platform/errors.js'
import { PlanSchema } from '../plans/plan.entity.js'
import { PriceSchema } from '../plans/price.entity.js'
import { readPlan, serializePlan } from '../plans/index.js'
import { CloneMap } from './clone-map.js'
import { copyCreditGrant, copyEntitlement, copyPlan, copyPrice } from './copy-records.js'

const body = {
  type: 'object',
  required: ['name', 'lookup_key'],
  additionalProperties: false,
  properties: { name: nameSchema, lookup_key: lookupKeySchema, description: descriptionSchema, metadata: metadataSchema },
} as const

interface CloneInput {
  name: string
  lookup_key: string
  description?: string
  metadata?: Record<string, string>
}

async function clonePlan(em: EntityManager, scope: Scope, userId: string, sourceId: string, input: CloneInput): Promise<string> {
  return em.transactional(async (tx) => {
    const source = await findInScope(tx, PlanSchema, scope, sourceId, 'plan')
    if (source.status !== 'published') throw new ValidationError(`plan ${source.id} is ${source.status}; only a published plan is cloned`, 'id')
    await assertLookupKeyFree(tx, PlanSchema, scope, input.lookup_key, 'plan')
    const target = (id: string) => ({ id, environment_id: scope.environment_id, actor: userId })
    const plan = tx.create(PlanSchema, {
      ...copyPlan(source, target(newId('plan'))), name: input.name, lookup_key: input.lookup_key,
      description: input.description ?? source.description, metadata: input.metadata ?? { ...source.metadata },
    })
    // same environment: meters, features and pricing units are the source's own
    const same = new CloneMap()
    const prices = await tx.find(PriceSchema, { ...scope, entity_type: 'PLAN', entity_id: source.id, status: 'published' })
    for (const p of prices) {
      if (p.meter_id) same.set('meter', p.meter_id, p.meter_id)
      if (p.price_unit_id) same.set('pricing_unit', p.price_unit_id, p.price_unit_id)
      tx.create(PriceSchema, copyPrice(p, target(newId('price')), plan.id, same, false))
    }
    const entitlements = await tx.find(EntitlementSchema, { ...scope, entity_type: 'PLAN', entity_id: source.id, status: { $ne: 'deleted' } })
    for (const e of entitlements) {
      same.set('feature', e.feature_id, e.feature_id)
      tx.create(EntitlementSchema, copyEntitlement(e, target(newId('ent')), plan.id, same))
    }
    const grants = await tx.find(CreditGrantSchema, { ...scope, plan_id: source.id, status: 'published' })
    for (const g of grants) tx.create(CreditGrantSchema, copyCreditGrant(g, target(newId('cgrant')), plan.id))
    await tx.flush()
    return plan.id
  })
}

export function planCloneRoutes(instance: FastifyInstance, ctx: BillingContext): void {
  typed(instance).post('/plans/:id/clone', { schema: { response: { 201: ref('Plan') }, tags: ['plans'], params: idParams, body } }, async (request, reply) => {
    const scope = scopeOf(request)
    const planId = await clonePlan(ctx.orm.em.fork(), scope, request.auth.userId, request.params.id, request.body)
    const view = await readPlan(ctx.orm.em.fork(), scope, planId)
    return reply.code(201).send(serializePlan(view.plan, view.prices, view.creditGrants, view.entitlements))
  })
}
