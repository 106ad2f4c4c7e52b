import { test } from 'node:test'
import assert from 'node:assert/strict'
import { jsonPointerToPath, toErrorResponse } from './http.js'
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
