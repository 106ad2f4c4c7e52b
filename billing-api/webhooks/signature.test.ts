import { test } from 'node:test'
import assert from 'node:assert/strict'
import { obscureSecret } from '../http/obscure-secret.js'
import { sign, signatureHeaders, verify } from './signature.js'

// Test vector from the Standard Webhooks specification's reference libraries.
const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek'
const ts = 1614265330
const body = '{"test": 2432232314}'

test('signs like the Standard Webhooks reference implementation', () => {
  assert.equal(sign(secret, id, ts, body), 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
})

test('verifies its own signature; rejects a changed body, another secret, a stale timestamp', () => {
  const headers = signatureHeaders(secret, id, ts, body)
  assert.equal(verify(secret, headers, body, ts + 10), true)
  assert.equal(verify(secret, headers, body + ' ', ts + 10), false)
  assert.equal(verify('whsec_' + Buffer.from('other').toString('base64'), headers, body, ts), false)
  assert.equal(verify(secret, headers, body, ts + 301), false)
  assert.equal(verify(secret, { ...headers, 'webhook-signature': `v1,bogus ${headers['webhook-signature']}` }, body, ts), true)
  assert.equal(obscureSecret(secret), 'whsec_****LaSw')
})
