// The billing API as a fastify plugin: every /v1 route behind API-key auth, one
// encapsulated plugin per domain.
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import type { BillingContext } from './context.js'
import { authRoutes } from './auth/routes.js'
import { customerRoutes } from './customers/routes.js'
import { invoiceRoutes } from './invoices/routes.js'
import { meterRoutes } from './meters/routes.js'
import { planRoutes } from './plans/routes.js'
import { subscriptionRoutes } from './subscriptions/routes.js'
import { tenantRoutes } from './tenants/routes.js'

export interface Authenticator {
  hook: onRequestHookHandler
  invalidate(): void
}

export async function registerBillingApi(app: FastifyInstance, ctx: BillingContext, auth: Authenticator): Promise<void> {
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', auth.hook)
      await v1.register(async (s) => tenantRoutes(s, ctx))
      await v1.register(async (s) => authRoutes(s, ctx, auth.invalidate))
      await v1.register(async (s) => meterRoutes(s, ctx))
      await v1.register(async (s) => customerRoutes(s, ctx))
      await v1.register(async (s) => planRoutes(s, ctx))
      await v1.register(async (s) => subscriptionRoutes(s, ctx))
      await v1.register(async (s) => invoiceRoutes(s, ctx))
    },
    { prefix: '/v1' },
  )
}
