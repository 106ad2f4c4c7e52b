import type { FastifyInstance } from 'fastify'
import type { Authenticator } from '../billing-api/app.js'
import { declareErrorStatuses } from '../platform/error-responses.js'
import { ingestRoutes, type IngestDeps } from './routes.js'

/** Ingest under /v1 with its own body limit (1000 events with properties exceed fastify's 1 MiB default). */
export async function registerIngest(app: FastifyInstance, deps: IngestDeps, auth: Authenticator, bodyLimit: number): Promise<void> {
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', auth.hook)
      v1.addHook('onRoute', (route) => declareErrorStatuses(route, [...auth.errorStatuses]))
      v1.addHook('onRoute', (route) => {
        route.bodyLimit = bodyLimit
      })
      await ingestRoutes(v1, deps)
    },
    { prefix: '/v1' },
  )
}
