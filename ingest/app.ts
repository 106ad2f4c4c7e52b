import type { FastifyInstance } from 'fastify'
import type { Authenticator } from '../billing-api/app.js'
import { declareErrorStatuses } from '../platform/error-responses.js'
import { ingestRoutes, type IngestDeps } from './routes.js'

/**
 * Ingest's routes under /v1, behind authentication, with their own body limit (1000 events with
 * properties exceed fastify's 1 MiB default): the routes themselves (registerIngest) or the main
 * thread's forwarding to the ingest thread (thread/forwarding-routes.ts).
 */
export async function registerIngestScope(app: FastifyInstance, auth: Authenticator, bodyLimit: number, routes: (v1: FastifyInstance) => Promise<void>): Promise<void> {
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', auth.hook)
      v1.addHook('onRoute', (route) => declareErrorStatuses(route, [...auth.errorStatuses]))
      v1.addHook('onRoute', (route) => {
        route.bodyLimit = bodyLimit
      })
      await routes(v1)
    },
    { prefix: '/v1' },
  )
}

export async function registerIngest(app: FastifyInstance, deps: IngestDeps, auth: Authenticator, bodyLimit: number): Promise<void> {
  await registerIngestScope(app, auth, bodyLimit, (v1) => ingestRoutes(v1, deps))
}
