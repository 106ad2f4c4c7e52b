// The OpenAPI document's header, shared by the running platform (/v1/docs/openapi.json) and the
// client generator (scripts/openapi/build-document.ts), so both describe the same API.
import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'

export const OPENAPI_PATH = '/v1/docs/openapi.json'

/** Registers @fastify/swagger and serves the document; routes registered afterwards are listed in it. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: { title: 'Meterline API', version: '1.0.0' },
      // Relative: the document describes the server it is served by.
      servers: [{ url: '/', description: 'the server this document is served by' }],
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' }, adminToken: { type: 'http', scheme: 'bearer' } } },
      security: [{ apiKey: [] }],
    },
    // Shared schemas (app.addSchema) keep their $id as their name under components.schemas.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  })
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger())
}
