import { test } from 'node:test'
import assert from 'node:assert/strict'
import { obscureSecret } from '../billing-api/http/obscure-secret.js'
import { decryptJson, decryptJsonRotating, encryptJson } from './secrets-at-rest.js'

const key = Buffer.alloc(32, 1)

test('AES-256-GCM round trip; a fresh IV each time; bound to key, associated data and bytes', () => {
  const value = { api_key: 'sk_test_abc', webhook_secret: 'whsec_xyz' }
  const a = encryptJson(key, 'row-1', value)
  const b = encryptJson(key, 'row-1', value)
  assert.notEqual(a, b)
  assert.ok(!a.includes('sk_test_abc'))
  assert.deepEqual(decryptJson(key, 'row-1', a), value)
  assert.throws(() => decryptJson(key, 'row-2', a))
  assert.throws(() => decryptJson(Buffer.alloc(32, 2), 'row-1', a))
  const [v, iv, tag, ct] = a.split('.')
  const flipped = Buffer.from(ct, 'base64url')
  flipped[0] ^= 1
  assert.throws(() => decryptJson(key, 'row-1', [v, iv, tag, flipped.toString('base64url')].join('.')))
  assert.throws(() => decryptJson(key, 'row-1', 'plain text'), /unrecognised/)
})

test('during a rotation, values under the previous key still decrypt and are marked stale', () => {
  const next = Buffer.alloc(32, 9)
  const old = encryptJson(key, 'row-1', 'whsec_abc')
  const fresh = encryptJson(next, 'row-1', 'whsec_abc')
  assert.deepEqual(decryptJsonRotating({ encryptionKey: next, previousEncryptionKey: key }, 'row-1', old), { value: 'whsec_abc', stale: true })
  assert.deepEqual(decryptJsonRotating({ encryptionKey: next, previousEncryptionKey: key }, 'row-1', fresh), { value: 'whsec_abc', stale: false })
  assert.throws(() => decryptJsonRotating({ encryptionKey: next }, 'row-1', old), 'without the previous key it does not decrypt')
  assert.throws(() => decryptJsonRotating({ encryptionKey: next, previousEncryptionKey: key }, 'row-2', old), 'still bound to its row')
})

test('obscured secrets keep the prefix and, for long secrets, the last four characters', () => {
  assert.equal(obscureSecret('sk_live_0123456789abcdef'), 'sk_live_****cdef')
  assert.equal(obscureSecret('whsec_0123456789abcdef'), 'whsec_****cdef')
  assert.equal(obscureSecret('short'), '****')
})
