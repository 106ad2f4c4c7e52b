import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ConnectionException } from '@mikro-orm/core'
import { toErrorResponse } from './http.js'
import { badText, findBadText } from './input-guard.js'
import { unavailableDependency } from './unavailable.js'

test('connection failures of Postgres and Redis are 503 service_unavailable; other errors are not', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
  const knexTimeout = Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError' })
  const shutdown = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01', severity: 'FATAL' })
  const offline = new Error("Stream isn't writeable and enableOfflineQueue options is false")
  assert.equal(unavailableDependency(refused), 'postgres')
  assert.equal(unavailableDependency(knexTimeout), 'postgres')
  assert.equal(unavailableDependency(new ConnectionException(shutdown)), 'postgres')
  assert.equal(unavailableDependency(offline), 'redis')
  assert.equal(unavailableDependency(new Error('Command timed out')), 'redis')
  assert.equal(unavailableDependency(new Error('boom')), undefined)
  assert.deepEqual(toErrorResponse(knexTimeout), { code: 'service_unavailable', http_status_code: 503, message: 'the database is unavailable; retry later' })
  assert.deepEqual(toErrorResponse(offline), { code: 'service_unavailable', http_status_code: 503, message: 'the job queue (Redis) is unavailable; retry later' })
  const outOfRange = Object.assign(new Error('insert into "x" - value "99999999999" is out of range for type integer'), { code: '22003', severity: 'ERROR' })
  assert.deepEqual(toErrorResponse(outOfRange), { code: 'validation_error', http_status_code: 400, message: 'a value cannot be stored: value "99999999999" is out of range for type integer' })
})

test('unstorable text: NUL and lone surrogates, found with their path', () => {
  assert.equal(badText('plain 😀'), undefined)
  assert.match(badText('a\u0000')!, /NUL/)
  assert.match(badText('\ud800')!, /lone/)
  assert.match(badText('x\udc00')!, /lone/)
  assert.match(badText('\udc00\ud800')!, /lone/, 'a reversed pair is two lone halves')
  assert.deepEqual(findBadText({ a: [{ b: 'ok' }, { b: 'x\u0000' }] }), { path: 'a[1].b', reason: 'must not contain the NUL character (U+0000)' })
  assert.equal(findBadText(Buffer.from([0, 0xd8])), undefined, 'raw bodies (webhook signatures) are bytes, not text')
})
