// Routes of subscription hierarchies: the inherited subscriptions of a PARENT (hierarchy-inherited.ts).
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { idParams } from '../http/schemas.js'
import { changeInheritedSubscriptions, listInheritedSubscriptions, type InheritedChildren } from './hierarchy-inherited.js'
import { inheritedChangeBody } from './hierarchy-schemas.js'
import { serializeSubscription } from './routes.js'
import { typed } from '../http/typed-routes.js'
import { inheritedSchema } from './response-schemas.js'

const serialize = (r: InheritedChildren) => ({
  subscription: serializeSubscription(r.parent),
  inherited_subscriptions: r.children.map((c) => serializeSubscription(c)),
})

export async function subscriptionHierarchyRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.get('/subscriptions/:id/inherited', { schema: { response: { 200: inheritedSchema }, tags: ['subscriptions'], params: idParams } }, async (request) =>
    serialize(await listInheritedSubscriptions(ctx, scopeOf(request), request.params.id)),
  )

  app.post(
    '/subscriptions/:id/inherited',
    { schema: { response: { 200: inheritedSchema }, tags: ['subscriptions'], params: idParams, body: inheritedChangeBody } },
    async (request) =>
      serialize(await changeInheritedSubscriptions(
        ctx, scopeOf(request), request.auth.userId, request.params.id, request.body,
      )),
  )
}
