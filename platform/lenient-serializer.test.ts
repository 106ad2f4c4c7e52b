// The response serializer writes what the schema lists and never throws on a missing required field.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildLenientSerializer, withoutRequired } from './lenient-serializer.js'
import { mappedErrorStatuses } from './error-responses.js'

test('withoutRequired drops the required lists, not a property called "required"', () => {
  const schema = { type: 'object', required: ['required'], properties: { required: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } } } }
  assert.deepEqual(withoutRequired(schema), { type: 'object', properties: { required: { type: 'object', properties: { a: { type: 'string' } } } } })
})

test('a missing required field is left out instead of failing the answer; unlisted fields are dropped; $refs resolve', () => {
  const compile = buildLenientSerializer({ Thing: { $id: 'Thing', type: 'object', required: ['id', 'name'], additionalProperties: false, properties: { id: { type: 'string' }, name: { type: 'string' } } } })
  const serialize = compile({ schema: { type: 'array', items: { $ref: 'Thing#' } } })
  assert.equal(serialize([{ id: 'a', name: undefined, secret: 'x' }]), '[{"id":"a"}]')
})

test('the error statuses every route declares follow from its method and path', () => {
  assert.deepEqual(mappedErrorStatuses({ method: 'GET', url: '/v1/meters' }), [400, 414, 500, 503])
  assert.deepEqual(mappedErrorStatuses({ method: 'PUT', url: '/v1/meters/:id' }).sort(), [400, 404, 409, 413, 414, 415, 500, 503])
  assert.deepEqual(mappedErrorStatuses({ method: 'DELETE', url: '/v1/meters/:id' }).sort(), [400, 404, 409, 414, 500, 503])
})
