// POST /plans/{id}/sync/subscriptions (Flexprice's plans.syncPlanPrices): served by the
// subscriptions domain, which owns the change (plan-sync.ts), beside the plan routes. The sync
// runs before the answer, which has Flexprice's workflow result shape: workflow_id and run_id name
// this run (there is nothing to poll), message counts the synced and skipped subscriptions, and
// synced_subscription_ids / skipped (with each reason) list them.
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { idParams } from '../http/schemas.js'
import { typed } from '../http/typed-routes.js'
import { objectOf, str, stringArray } from '../http/response-schemas.js'
import { syncPlanPrices } from './plan-sync.js'

export const planSyncResultSchema = objectOf({
  workflow_id: str,
  run_id: str,
  message: str,
  plan_id: str,
  synced_subscription_ids: stringArray,
  skipped: { type: 'array', items: objectOf({ subscription_id: str, reason: str }) },
})

export async function planSyncRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post('/plans/:id/sync/subscriptions', { schema: { response: { 200: planSyncResultSchema }, tags: ['plans'], params: idParams } }, async (request) => {
    return syncPlanPrices(ctx, scopeOf(request), request.auth.userId, request.params.id)
  })
}
