// billing-api's ingest routes when ingest runs as its own process (the processes topology,
// INGEST_FORWARD_URL): one base URL serves the whole API, as a client (Flexprice's SDK, the
// README's curl lines) expects. The request goes on unchanged, its key included: ingest
// authenticates, rate-limits and validates it once, and its answer comes back as it is. Clients
// that send at high rates post to ingest's own port and skip this hop.
import type { FastifyInstance } from 'fastify'
import { declareErrorStatuses } from '../platform/error-responses.js'
import { ServiceUnavailableError } from '../platform/errors.js'
import { bulkEventsRoutes, singleEventRoute } from './routes.js'

const passThrough = () => () => true
/** headers of one connection, not of the request or its answer */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'upgrade', 'te', 'trailer', 'proxy-connection'])

export async function registerIngestHttpForwarding(app: FastifyInstance, opts: { ingestUrl: string; bodyLimit: number; errorStatuses: readonly number[] }): Promise<void> {
  await app.register(
    async (v1) => {
      v1.addHook('onRoute', (route) => {
        route.bodyLimit = opts.bodyLimit
        declareErrorStatuses(route, [...opts.errorStatuses])
      })
      // Every body as bytes, whatever its type: ingest parses it.
      v1.removeAllContentTypeParsers()
      v1.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))
      for (const route of [singleEventRoute, ...bulkEventsRoutes]) {
        v1.post(route.url, { schema: route.schema, validatorCompiler: passThrough }, async (request, reply) => {
          const headers: Record<string, string> = {}
          for (const [name, value] of Object.entries(request.headers)) {
            if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
          }
          let answer: Response
          try {
            answer = await fetch(`${opts.ingestUrl}/v1${route.url}`, { method: 'POST', headers, body: request.body as Uint8Array<ArrayBuffer> | undefined })
          } catch {
            throw new ServiceUnavailableError('ingest is not answering; retry the request')
          }
          const payload = Buffer.from(await answer.arrayBuffer())
          for (const [name, value] of answer.headers) {
            // fetch has decoded the body: its encoding and length are this reply's own
            if (!HOP_BY_HOP.has(name) && name !== 'content-encoding') void reply.header(name, value)
          }
          // ingest's status, whichever the schema lists
          return reply.code(answer.status as 202).send(payload)
        })
      }
    },
    { prefix: '/v1' },
  )
}
