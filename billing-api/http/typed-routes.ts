// Route handlers take their request types from their JSON schemas (json-schema-to-ts), so a
// handler reads `request.body` as the schema says instead of casting it.
import type { FastifyInstance } from 'fastify'
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts'

export const typed = (app: FastifyInstance) => app.withTypeProvider<JsonSchemaToTsProvider>()
