// The committed client (openapi.json and src/schema.ts) must be what the generator makes from
// the API as it is now: a route or schema change without `npm run client:generate` fails here.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { DOCUMENT_FILE, SCHEMA_FILE, generateClient } from '../scripts/openapi/generate-client.js'

test('the committed client matches the OpenAPI document of the current routes', async () => {
  const fresh = await generateClient()
  const committed = JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as { paths: Record<string, unknown> }
  const current = JSON.parse(fresh.document) as { paths: Record<string, unknown> }
  const added = Object.keys(current.paths).filter((p) => !(p in committed.paths))
  const removed = Object.keys(committed.paths).filter((p) => !(p in current.paths))
  const changed = Object.keys(current.paths).filter((p) => p in committed.paths && JSON.stringify(current.paths[p]) !== JSON.stringify(committed.paths[p]))
  const hint = 'run `npm run client:generate` and commit client/'
  assert.deepEqual({ added, removed, changed }, { added: [], removed: [], changed: [] }, hint)
  assert.equal(fresh.document, readFileSync(DOCUMENT_FILE, 'utf8'), hint)
  assert.equal(fresh.schema, readFileSync(SCHEMA_FILE, 'utf8'), hint)
})

test('the client document types every error as ErrorResponse and the ingest answers', () => {
  const doc = JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as {
    paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>
  }
  const bulk = doc.paths['/v1/events/raw/bulk'].post.responses
  assert.deepEqual(bulk['202'].content?.['application/json'].schema, {
    type: 'object',
    required: ['message', 'count', 'batch_id'],
    properties: { message: { type: 'string' }, count: { type: 'integer' }, batch_id: { type: 'string' } },
  })
  assert.deepEqual(bulk['4XX'].content?.['application/json'].schema, { $ref: '#/components/schemas/ErrorResponse' })
  assert.deepEqual(Object.keys(doc.paths['/v1/invoices/{id}/pdf'].get.responses['200'].content ?? {}), ['application/pdf'], 'a PDF is not typed as JSON')
  assert.deepEqual(doc.paths['/v1/meters/{id}'].get.responses['404'].content?.['application/json'].schema, { $ref: '#/components/schemas/ErrorResponse' })
})
