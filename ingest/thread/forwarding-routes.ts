// The ingest routes of the main thread when ingest runs on its own thread: authentication (and
// its rate limits) here, the body read as bytes and handed over unparsed; the worker validates
// and answers. The routes carry the same schemas for the OpenAPI document; the worker's routes
// apply them.
import type { FastifyInstance } from 'fastify'
import type { Authenticator } from '../../billing-api/app.js'
import { registerIngestScope } from '../app.js'
import { bulkEventsRoutes, singleEventRoute } from '../routes.js'
import type { IngestThread } from './ingest-thread.js'

const passThrough = () => () => true

export async function registerIngestForwarding(app: FastifyInstance, thread: IngestThread, auth: Authenticator, bodyLimit: number): Promise<void> {
  await registerIngestScope(app, auth, bodyLimit, async (v1) => {
    // Every body as bytes, whatever its type: the worker's server parses it as the main thread's would.
    v1.removeAllContentTypeParsers()
    v1.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))
    for (const route of [singleEventRoute, ...bulkEventsRoutes]) {
      v1.post(route.url, { schema: route.schema, validatorCompiler: passThrough }, async (request, reply) => {
        const answer = await thread.forward({
          url: `/v1${route.url}`,
          contentType: request.headers['content-type'],
          body: request.body as Buffer | undefined,
          auth: request.auth,
        })
        // the worker's status, whichever the schema lists
        return reply.code(answer.status as 202).headers(answer.headers).send(answer.payload)
      })
    }
  })
}
