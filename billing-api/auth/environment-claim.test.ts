// The JWT environment claim: verification (pure) and, over HTTP, the environment it selects.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PermissionDeniedError } from '../../platform/errors.js'
import { assertError } from '../../test/support/assertions.js'
import { usePlatform } from '../../test/support/platform.js'
import { environmentFromJwt, signJwt, verifyJwt } from './environment-claim.js'

const secret = Buffer.from('test-jwt-secret-of-at-least-32-bytes!!')
const now = new Date('2026-09-01T00:00:00Z')
const at = now.getTime() / 1000

test('verifyJwt accepts a valid HS256 token and refuses the rest, saying why', () => {
  assert.deepEqual(verifyJwt(signJwt({ environment_id: 'env_1', exp: at + 60 }, secret), secret, now), { environment_id: 'env_1', exp: at + 60 })
  const refusals: [string, RegExp][] = [
    [signJwt({ environment_id: 'env_1' }, Buffer.from('another-secret-of-at-least-32-bytes!!!')), /bad signature/],
    [signJwt({ environment_id: 'env_1' }, secret, { alg: 'none' }), /alg none is not accepted/],
    [signJwt({ environment_id: 'env_1' }, secret, { alg: 'HS512' }), /alg HS512 is not accepted/],
    [signJwt({ environment_id: 'env_1', exp: at }, secret), /expired/],
    [signJwt({ environment_id: 'env_1', nbf: at + 1 }, secret), /not valid yet/],
    [signJwt({ environment_id: 7 }, secret), /environment_id must be a non-empty string/],
    [signJwt({ exp: 'tomorrow' }, secret), /exp must be a number/],
    ['a.b', /expected header.payload.signature/],
    ['!!.e30.x', /header is not base64url JSON/],
  ]
  for (const [token, message] of refusals) {
    assert.throws(() => verifyJwt(token, secret, now), (e: unknown) => e instanceof PermissionDeniedError && e.httpStatus === 401 && message.test(e.message), token)
  }
  // the payload cannot be swapped under a signature
  const [h, , s] = signJwt({ environment_id: 'env_1' }, secret).split('.')
  const forged = `${h}.${Buffer.from(JSON.stringify({ environment_id: 'env_2' })).toString('base64url')}.${s}`
  assert.throws(() => verifyJwt(forged, secret, now), /bad signature/)
})

test('environmentFromJwt: no header, no claim, no secret, another tenant', () => {
  assert.equal(environmentFromJwt(undefined, secret, 'tenant_a', now), undefined)
  assert.equal(environmentFromJwt(`Bearer ${signJwt({ tenant_id: 'tenant_a' }, secret)}`, secret, 'tenant_a', now), undefined)
  assert.equal(environmentFromJwt(`Bearer ${signJwt({ environment_id: 'env_1' }, secret)}`, secret, 'tenant_a', now), 'env_1')
  assert.throws(() => environmentFromJwt(`Bearer ${signJwt({ environment_id: 'env_1' }, secret)}`, null, 'tenant_a', now), /AUTH_JWT_SECRET is not configured/)
  assert.throws(() => environmentFromJwt('Basic dXNlcjpwYXNz', secret, 'tenant_a', now), /must be "Bearer <jwt>"/)
  assert.throws(
    () => environmentFromJwt(`Bearer ${signJwt({ environment_id: 'env_1', tenant_id: 'tenant_b' }, secret)}`, secret, 'tenant_a', now),
    (e: unknown) => e instanceof PermissionDeniedError && e.httpStatus === 403,
  )
})

const p = usePlatform({ services: ['billing-api'], config: { authJwtSecret: secret } })

test('over HTTP the claim selects the environment, before the header; other tenants\' environments are not found', async () => {
  const t = await p.newTenant()
  const { production, development } = t.environments
  const bearer = (claims: Record<string, unknown>) => ({ authorization: `Bearer ${signJwt(claims, secret)}` })
  const post = (headers: Record<string, string>, external_id: string) => t.api.request('POST', '/v1/customers', { external_id }, headers)

  const viaClaim = await post(bearer({ environment_id: development }), 'c-dev')
  assert.equal(viaClaim.status, 201, JSON.stringify(viaClaim.body))
  assert.equal(viaClaim.body.environment_id, development)
  // the claim wins over the header
  const both = await post({ ...bearer({ environment_id: development }), 'x-environment-id': production }, 'c-both')
  assert.equal(both.body.environment_id, development)
  // no claim: the header, then the key's environment
  assert.equal((await post({ ...bearer({ tenant_id: t.tenantId }), 'x-environment-id': development }, 'c-header')).body.environment_id, development)
  assert.equal((await post({}, 'c-key')).body.environment_id, production)
  const devCustomers = (await p.client(t.apiKey, development).get('/v1/customers')).body.items.map((c: { external_id: string }) => c.external_id).sort()
  assert.deepEqual(devCustomers, ['c-both', 'c-dev', 'c-header'])

  const other = await p.newTenant()
  assertError(await post(bearer({ environment_id: other.environments.development }), 'c-x'), 404, 'not_found')
  assertError(await post(bearer({ environment_id: development, tenant_id: other.tenantId }), 'c-y'), 403, 'permission_denied')
  assertError(await post({ authorization: `Bearer ${signJwt({ environment_id: development }, Buffer.from('not-the-secret-but-32-bytes-long!!!'))}` }, 'c-z'), 401, 'permission_denied', /bad signature/)
  // a valid JWT without an API key authenticates nothing
  assertError(await p.client().request('POST', '/v1/customers', { external_id: 'c-w' }, bearer({ environment_id: development })), 401, 'permission_denied')
})
