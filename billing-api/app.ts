// The billing API as a fastify plugin: every /v1 route behind API-key auth, one
// encapsulated plugin per domain.
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import type { BillingContext } from './context.js'
import { declareErrorStatuses } from '../platform/error-responses.js'
import { adminRoutes } from './admin/index.js'
import { authRoutes } from './auth/index.js'
import { inboundWebhookRoutes } from './integrations/index.js'
import { modules } from './modules.js'
import { subscriptionV2Routes } from './subscriptions/index.js'
import { signupRoutes } from './tenants/index.js'

export interface Authenticator {
  hook: onRequestHookHandler
  invalidate(): void
  /** the error statuses the hook answers, declared on every route behind it */
  errorStatuses: readonly number[]
}

export async function registerBillingApi(app: FastifyInstance, ctx: BillingContext, auth: Authenticator): Promise<void> {
  for (const m of modules) for (const schema of m.schemas ?? []) app.addSchema(schema)
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', auth.hook)
      v1.addHook('onRoute', (route) => declareErrorStatuses(route, [...auth.errorStatuses]))
      await v1.register(async (s) => authRoutes(s, ctx, () => auth.invalidate()))
      for (const m of modules) {
        const routes = m.routes
        if (routes) await v1.register(async (s) => routes(s, ctx))
      }
    },
    { prefix: '/v1' },
  )
  // Signup needs no API key (off unless SIGNUP_ENABLED).
  await app.register(async (s) => signupRoutes(s, ctx), { prefix: '/v1' })
  // Version 2 reads (spec: the v2 subscription response), same auth.
  await app.register(
    async (v2) => {
      v2.addHook('onRequest', auth.hook)
      v2.addHook('onRoute', (route) => declareErrorStatuses(route, [...auth.errorStatuses]))
      await v2.register(async (s) => subscriptionV2Routes(s, ctx))
    },
    { prefix: '/v2' },
  )
  // The operators' API: its own credential (ADMIN_TOKEN), never a tenant's API key.
  await app.register(async (s) => adminRoutes(s, ctx), { prefix: '/v1/admin' })
  // Inbound provider webhooks (spec: absolute /webhooks/<provider>/{tenant_id}/{env_id}): no
  // /v1, no API key; verified by the provider's signature in their own raw-body plugin.
  await app.register(async (s) => inboundWebhookRoutes(s, ctx))
}
