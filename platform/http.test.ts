import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHttpServer, jsonPointerToPath, toErrorResponse } from './http.js'
import { NotFoundError, ValidationError } from './errors.js'

test('JSON pointers become field paths that name the index', () => {
  assert.equal(jsonPointerToPath('/events/3/timestamp'), 'events[3].timestamp')
  assert.equal(jsonPointerToPath('/aggregation/field'), 'aggregation.field')
  assert.equal(jsonPointerToPath(''), '')
})

test('errors map to the spec ErrorResponse; unknown errors never leak their message', () => {
  assert.deepEqual(toErrorResponse(new NotFoundError('meter', 'm1')), { code: 'not_found', http_status_code: 404, message: 'meter m1 not found' })
  assert.deepEqual(toErrorResponse(new ValidationError('bad')), { code: 'validation_error', http_status_code: 400, message: 'bad' })
  assert.deepEqual(toErrorResponse(new Error('password=hunter2')), { code: 'internal_error', http_status_code: 500, message: 'internal server error' })
})

test('a JSON content type with an empty body is a request without a body; a route that needs one still refuses it', async () => {
  const app = createHttpServer({ service: 'test', logLevel: 'fatal' })
  app.delete('/things/:id', async (request) => ({ deleted: (request.params as { id: string }).id, body: request.body ?? null }))
  app.post('/things', { schema: { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } }, async (request) => request.body)
  const json = { 'content-type': 'application/json' }
  try {
    const del = await app.inject({ method: 'DELETE', url: '/things/t1', headers: json, payload: '' })
    assert.deepEqual([del.statusCode, del.json()], [200, { deleted: 't1', body: null }])
    const empty = await app.inject({ method: 'POST', url: '/things', headers: json, payload: '' })
    assert.deepEqual([empty.statusCode, empty.json().code], [400, 'validation_error'])
    const broken = await app.inject({ method: 'POST', url: '/things', headers: json, payload: '{"name": ' })
    assert.deepEqual([broken.statusCode, broken.json().code], [400, 'validation_error'])
    assert.match(broken.json().message, /malformed JSON/)
    const poisoned = await app.inject({ method: 'POST', url: '/things', headers: json, payload: '{"name": "a", "__proto__": {"x": 1}}' })
    assert.equal(poisoned.statusCode, 400, 'prototype poisoning is still refused')
    const ok = await app.inject({ method: 'POST', url: '/things', headers: { 'content-type': 'application/json; charset=utf-8' }, payload: '{"name": "a"}' })
    assert.deepEqual([ok.statusCode, ok.json()], [200, { name: 'a' }])
  } finally {
    await app.close()
  }
})
