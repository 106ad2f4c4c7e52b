import { test } from 'node:test'
import assert from 'node:assert/strict'
import { bearerToken, sameToken } from './token.js'

test('the bearer token is taken from the Authorization header only in the Bearer form', () => {
  assert.equal(bearerToken('Bearer abc123'), 'abc123')
  assert.equal(bearerToken('bearer  abc123 '), 'abc123')
  assert.equal(bearerToken(['Bearer first', 'Bearer second']), 'first')
  for (const h of [undefined, '', 'Bearer', 'Bearer ', 'Basic abc123', 'abc123', 'Bearer a b']) assert.equal(bearerToken(h), undefined, String(h))
})

test('tokens compare equal only when identical, whatever their lengths', () => {
  const t = 'f'.repeat(48)
  assert.equal(sameToken(t, t), true)
  assert.equal(sameToken(`${t}0`, t), false)
  assert.equal(sameToken(t.slice(1), t), false)
  assert.equal(sameToken('', t), false)
  assert.equal(sameToken('F'.repeat(48), t), false)
})
