// Stored API key forms: the keyed hash, the scheme naming its secret, and the lookup candidates
// that let legacy and previous-secret rows still authenticate.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, createHmac } from 'node:crypto'
import { candidateHashes, generateApiKey, hashApiKey, keyedFromDigest, LEGACY_SCHEME, legacyDigest, schemeOf } from './api-key.js'

const S1 = Buffer.alloc(32, 1)
const S2 = Buffer.alloc(32, 2)

test('the keyed hash is HMAC-SHA256 under the secret of the key\'s SHA-256 hex digest', () => {
  const key = 'ml_example'
  const digest = createHash('sha256').update(key).digest('hex')
  assert.equal(legacyDigest(key), digest)
  assert.deepEqual(hashApiKey({ secret: S1 }, key), { hash: createHmac('sha256', S1).update(digest).digest('hex'), scheme: schemeOf(S1) })
  assert.deepEqual(keyedFromDigest(S1, digest), hashApiKey({ secret: S1 }, key), 'a legacy row upgrades to exactly what a new key stores')
  assert.notEqual(hashApiKey({ secret: S2 }, key).hash, hashApiKey({ secret: S1 }, key).hash)
})

test('the scheme names the secret without revealing it', () => {
  assert.match(schemeOf(S1), /^hmac-sha256:[0-9a-f]{12}$/)
  assert.equal(schemeOf(S1), schemeOf(Buffer.alloc(32, 1)))
  assert.notEqual(schemeOf(S1), schemeOf(S2))
  assert.ok(!schemeOf(S1).includes(S1.toString('hex').slice(0, 12)))
})

test('lookup candidates: current secret, then the previous one during a rotation, then the legacy digest', () => {
  const key = 'ml_x'
  assert.deepEqual(candidateHashes({ secret: S2, previous: S1 }, key), [hashApiKey({ secret: S2 }, key), hashApiKey({ secret: S1 }, key), { hash: legacyDigest(key), scheme: LEGACY_SCHEME }])
  assert.equal(candidateHashes({ secret: S2 }, key).length, 2)
})

test('generated keys: ml_ and 43 base64url characters, shown once, stored keyed', () => {
  const k = generateApiKey({ secret: S1 })
  assert.match(k.plaintext, /^ml_[A-Za-z0-9_-]{43}$/)
  assert.deepEqual({ hash: k.hash, scheme: k.scheme }, hashApiKey({ secret: S1 }, k.plaintext))
  assert.equal(k.displayId, `${k.plaintext.slice(0, 7)}...${k.plaintext.slice(-4)}`)
})
