// The inbound provider webhook, registered on the root app (no /v1, no API key): providers
// authenticate by signature. The body is kept as raw bytes, because the signature covers
// exactly those bytes; parsing happens after verification.
import type { FastifyInstance } from 'fastify'
import type { BillingContext } from '../context.js'
import { receiveProviderWebhook } from './inbound-webhook.js'
import { PROVIDER_TYPES } from './providers.js'
import { typed } from '../http/typed-routes.js'
import { DomainError } from '../../platform/errors.js'
import { errorStatuses } from '../../platform/error-responses.js'

export async function inboundWebhookRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))

  app.post(
    '/webhooks/:provider/:tenant_id/:env_id',
    {
      schema: {
        tags: ['integrations'],
        summary: 'inbound provider webhook (signature-verified, no API key)',
        security: [],
        params: {
          type: 'object',
          required: ['provider', 'tenant_id', 'env_id'],
          properties: { provider: { type: 'string', enum: [...PROVIDER_TYPES] }, tenant_id: { type: 'string', maxLength: 100 }, env_id: { type: 'string', maxLength: 100 } },
        },
        response: {
          // a bad or missing signature (the 404 of an unknown connection comes with the path parameters)
          ...errorStatuses(401),
          200: {
            type: 'object',
            properties: { received: { type: 'boolean' }, event_id: { type: 'string' }, event_type: { type: 'string' }, duplicate: { type: 'boolean' }, outcome: { type: 'string' } },
          },
        },
      },
    },
    async (request) => {
      const p = request.params
      // Abuse limits: an address whose deliveries keep failing verification is refused for the
      // rest of the window; every connection takes a bounded number of deliveries per window.
      await ctx.abuse?.assertNotBlocked('webhook_failures', request.ip)
      await ctx.abuse?.admit('webhook_connection', `${p.provider}:${p.tenant_id}:${p.env_id}`)
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
      try {
        const result = await receiveProviderWebhook(ctx, p.provider, p.tenant_id, p.env_id, raw, request.headers, request.log)
        return { received: true, ...result }
      } catch (err) {
        if (err instanceof DomainError && (err.httpStatus === 401 || err.httpStatus === 404)) await ctx.abuse?.count('webhook_failures', request.ip)
        throw err
      }
    },
  )
}
