// Coupons through the HTTP API and the redemption use case, against the real Postgres.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { InvalidOperationError, NotFoundError } from '../../platform/errors.js'
import { created } from '../../test/support/fixtures.js'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import type { Scope } from '../db/scope.js'
import { redeemCoupon } from './redeem-coupon.js'
import { assertError } from '../../test/support/assertions.js'

const p = usePlatform()


/** Rows in the coupons table for the scope, whatever their status. */
async function couponRows(scope: Scope): Promise<number> {
  const [row] = await p.ctx.orm.em.getConnection().execute('SELECT count(*)::int AS n FROM coupons WHERE tenant_id = ? AND environment_id = ?', [scope.tenant_id, scope.environment_id])
  return row.n
}

async function tenant() {
  const t = await p.newTenant()
  return { ...t, scope: { tenant_id: t.tenantId, environment_id: t.environments.production } }
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const percentOff = (over: object = {}) => ({ name: '15 percent', type: 'percentage', percentage_off: '15', ...over })
const tenOff = (over: object = {}) => ({ name: 'Ten off', type: 'fixed', amount_off: '10', currency: 'USD', ...over })

test('creates and reads coupons with their exact wire values', async () => {
  const t = await tenant()
  const fixed = await created(t.api.post('/v1/coupons', {
    name: 'Spring ten', type: 'fixed', amount_off: '10.5', currency: 'usd', duration: 'repeating', duration_in_periods: 3,
    max_redemptions: 100, redeem_after: '2026-01-01T00:00:00Z', redeem_before: '2026-03-01T01:00:00+01:00',
    rules: { plan_ids: ['plan_1'], min_amount: '20' }, metadata: { campaign: 'spring' },
  }))
  assert.match(fixed.id, /^coupon_[0-9A-Z]{26}$/)
  assert.match(fixed.created_at, ISO)
  assert.equal(fixed.updated_at, fixed.created_at)
  assert.deepEqual(fixed, {
    id: fixed.id, tenant_id: t.tenantId, environment_id: t.environments.production, status: 'published',
    metadata: { campaign: 'spring' }, created_at: fixed.created_at, updated_at: fixed.updated_at, created_by: t.userId, updated_by: t.userId,
    name: 'Spring ten', type: 'fixed', amount_off: '10.50', percentage_off: null, currency: 'USD', duration: 'repeating',
    duration_in_periods: 3, max_redemptions: 100, total_redemptions: 0, redeem_after: '2026-01-01T00:00:00.000Z',
    redeem_before: '2026-03-01T00:00:00.000Z', rules: { plan_ids: ['plan_1'], min_amount: '20' }, cadence: 'repeated',
  })
  assert.deepEqual((await t.api.get(`/v1/coupons/${fixed.id}`)).body, fixed, 'read back as created')

  const pct = await created(t.api.post('/v1/coupons', percentOff({ percentage_off: '12.50' })))
  const { id, created_at, updated_at, ...rest } = pct
  assert.deepEqual(rest, {
    tenant_id: t.tenantId, environment_id: t.environments.production, status: 'published', metadata: {},
    created_by: t.userId, updated_by: t.userId, name: '15 percent', type: 'percentage', amount_off: null, percentage_off: '12.5',
    currency: null, duration: 'once', duration_in_periods: null, max_redemptions: null, total_redemptions: 0,
    redeem_after: null, redeem_before: null, rules: {}, cadence: 'once',
  })
  assert.deepEqual((await t.api.get(`/v1/coupons/${id}`)).body, pct)

  assert.equal((await created(t.api.post('/v1/coupons', tenOff({ amount_off: '1500', currency: 'JPY' })))).amount_off, '1500')
  assert.equal((await created(t.api.post('/v1/coupons', tenOff({ amount_off: '1.5', currency: 'KWD' })))).amount_off, '1.500')
  assert.equal((await created(t.api.post('/v1/coupons', percentOff({ percentage_off: '100', duration: 'forever' })))).percentage_off, '100')
  // cadence is Flexprice's name for duration (repeated for repeating)
  const repeated = await created(t.api.post('/v1/coupons', percentOff({ cadence: 'repeated', duration_in_periods: 2 })))
  assert.deepEqual([repeated.duration, repeated.cadence, repeated.duration_in_periods], ['repeating', 'repeated', 2])
  const forever = await created(t.api.post('/v1/coupons', percentOff({ cadence: 'forever', duration: 'forever' })))
  assert.deepEqual([forever.duration, forever.cadence], ['forever', 'forever'])
  assertError(await t.api.get('/v1/coupons/coupon_unknown'), 404, 'not_found', /coupon coupon_unknown not found/)
})

test('lists coupons filtered by status and type, paginated, in creation order', async () => {
  const t = await tenant()
  const f1 = await created(t.api.post('/v1/coupons', tenOff({ name: 'f1' })))
  const p1 = await created(t.api.post('/v1/coupons', percentOff({ name: 'p1' })))
  const f2 = await created(t.api.post('/v1/coupons', tenOff({ name: 'f2' })))
  const p2 = await created(t.api.post('/v1/coupons', percentOff({ name: 'p2' })))
  const f3 = await created(t.api.post('/v1/coupons', tenOff({ name: 'f3' })))
  assert.equal((await t.api.delete(`/v1/coupons/${f2.id}`)).status, 200)

  const names = async (query: string) => {
    const res = await t.api.get(`/v1/coupons${query}`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return { names: res.body.items.map((c: any) => c.name), pagination: res.body.pagination }
  }
  assert.deepEqual(await names(''), { names: ['f1', 'p1', 'p2', 'f3'], pagination: { limit: 50, offset: 0, total: 4 } })
  assert.deepEqual(await names('?status=published'), { names: ['f1', 'p1', 'p2', 'f3'], pagination: { limit: 50, offset: 0, total: 4 } })
  assert.deepEqual(await names('?type=percentage'), { names: ['p1', 'p2'], pagination: { limit: 50, offset: 0, total: 2 } })
  assert.deepEqual(await names('?type=fixed'), { names: ['f1', 'f3'], pagination: { limit: 50, offset: 0, total: 2 } })
  assert.deepEqual(await names('?status=archived'), { names: ['f2'], pagination: { limit: 50, offset: 0, total: 1 } })
  assert.deepEqual(await names('?status=archived&type=percentage'), { names: [], pagination: { limit: 50, offset: 0, total: 0 } })
  assert.deepEqual(await names('?limit=2&offset=1'), { names: ['p1', 'p2'], pagination: { limit: 2, offset: 1, total: 4 } })
  assert.deepEqual(await names('?limit=2&offset=4'), { names: [], pagination: { limit: 2, offset: 4, total: 4 } })
  const listed = (await t.api.get('/v1/coupons?limit=1')).body.items[0]
  assert.deepEqual(listed, (await t.api.get(`/v1/coupons/${f1.id}`)).body, 'list items are full coupons')
  assert.ok([p1, p2, f3].every((c) => c.status === 'published'))

  assertError(await t.api.get('/v1/coupons?limit=0'), 400, 'validation_error', /limit/)
  assertError(await t.api.get('/v1/coupons?limit=1001'), 400, 'validation_error', /limit/)
  assertError(await t.api.get('/v1/coupons?offset=-1'), 400, 'validation_error', /offset/)
  assertError(await t.api.get('/v1/coupons?status=deleted'), 400, 'validation_error', /status/)
  assertError(await t.api.get('/v1/coupons?type=bogus'), 400, 'validation_error', /type/)
  assertError(await t.api.get('/v1/coupons?typo=fixed'), 400, 'validation_error', /typo/)
})

test('updates change name, metadata, max_redemptions and redeem_before, and nothing else', async () => {
  const t = await tenant()
  const coupon = await created(t.api.post('/v1/coupons', tenOff({
    metadata: { a: '1' }, max_redemptions: 10, redeem_after: '2026-01-01T00:00:00Z', redeem_before: '2026-06-01T00:00:00Z',
  })))

  const res = await t.api.put(`/v1/coupons/${coupon.id}`, { name: 'Renamed', metadata: { b: '2' }, max_redemptions: 20, redeem_before: '2026-09-01T00:00:00Z' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.ok(res.body.updated_at > coupon.updated_at)
  const expected = { ...coupon, name: 'Renamed', metadata: { b: '2' }, max_redemptions: 20, redeem_before: '2026-09-01T00:00:00.000Z', updated_at: res.body.updated_at }
  assert.deepEqual(res.body, expected)
  assert.deepEqual((await t.api.get(`/v1/coupons/${coupon.id}`)).body, expected)

  // Rejected updates change nothing.
  for (const [body, field] of [
    [{ amount_off: '5' }, /amount_off/], [{ percentage_off: '5' }, /percentage_off/], [{ currency: 'EUR' }, /currency/],
    [{ type: 'percentage' }, /type/], [{ duration: 'forever' }, /duration/], [{ total_redemptions: 3 }, /total_redemptions/],
    [{ redeem_after: '2025-01-01T00:00:00Z' }, /redeem_after/], [{ status: 'published' }, /status/], [{ rules: {} }, /rules/],
    [{ name: '' }, /name/], [{ max_redemptions: 0 }, /max_redemptions/], [{ max_redemptions: 1.5 }, /max_redemptions/],
    [{ redeem_before: 'soon' }, /redeem_before/], [{ redeem_before: '2025-12-31T00:00:00Z' }, /redeem_before must be after redeem_after/],
    [{ redeem_before: '2026-01-01T00:00:00Z' }, /redeem_before/], [{ metadata: { n: 1 } }, /metadata/],
  ] as [object, RegExp][]) {
    assertError(await t.api.put(`/v1/coupons/${coupon.id}`, body), 400, 'validation_error', field)
  }
  assert.deepEqual((await t.api.get(`/v1/coupons/${coupon.id}`)).body, expected)

  // max_redemptions can not go below what was already redeemed.
  for (let i = 0; i < 3; i++) await redeemCoupon(p.ctx.orm.em.fork(), t.scope, coupon.id, new Date('2026-02-01T00:00:00Z'))
  assertError(await t.api.put(`/v1/coupons/${coupon.id}`, { max_redemptions: 2 }), 400, 'validation_error', /max_redemptions must not be below total_redemptions \(3\)/)
  assert.equal((await t.api.get(`/v1/coupons/${coupon.id}`)).body.max_redemptions, 20)
  assert.equal((await t.api.put(`/v1/coupons/${coupon.id}`, { max_redemptions: 3 })).body.max_redemptions, 3)

  // null lifts the limit and the deadline.
  const lifted = (await t.api.put(`/v1/coupons/${coupon.id}`, { max_redemptions: null, redeem_before: null })).body
  assert.equal(lifted.max_redemptions, null)
  assert.equal(lifted.redeem_before, null)
  assert.equal(lifted.total_redemptions, 3)
  assert.equal(lifted.amount_off, '10.00')

  assertError(await t.api.put('/v1/coupons/coupon_unknown', { name: 'x' }), 404, 'not_found')
})

test('delete archives: the coupon stays readable, leaves the default list and cannot be redeemed', async () => {
  const t = await tenant()
  const coupon = await created(t.api.post('/v1/coupons', percentOff()))
  const res = await t.api.delete(`/v1/coupons/${coupon.id}`)
  assert.equal(res.status, 200)
  assert.deepEqual(res.body, { message: `${coupon.id} deleted` })
  const archived = (await t.api.get(`/v1/coupons/${coupon.id}`)).body
  assert.equal(archived.status, 'archived')
  assert.equal(archived.updated_by, t.userId)
  assert.deepEqual({ ...archived, status: 'published', updated_at: coupon.updated_at }, coupon)
  assert.equal((await t.api.get('/v1/coupons')).body.pagination.total, 0)
  assert.equal((await t.api.delete(`/v1/coupons/${coupon.id}`)).status, 200, 'archiving twice is a no-op')
  await assert.rejects(redeemCoupon(p.ctx.orm.em.fork(), t.scope, coupon.id, new Date()), (err: unknown) =>
    err instanceof InvalidOperationError && /the coupon is archived/.test(err.message))
  assertError(await t.api.delete('/v1/coupons/coupon_unknown'), 404, 'not_found')
})

test('every rule on create is enforced with a validation_error naming the field, and nothing is written', async () => {
  const t = await tenant()
  const cases: [object, RegExp][] = [
    [{ type: 'fixed', amount_off: '1', currency: 'USD' }, /name/],
    [tenOff({ name: '' }), /name/],
    [tenOff({ name: 'x'.repeat(256) }), /name/],
    [{ name: 'x' }, /type/],
    [tenOff({ type: 'bogus' }), /type/],
    [tenOff({ amount_off: undefined }), /amount_off is required for fixed coupons/],
    [tenOff({ currency: undefined }), /currency is required for fixed coupons/],
    [tenOff({ amount_off: '0' }), /amount_off must be greater than 0/],
    [tenOff({ amount_off: '-1' }), /amount_off/],
    [tenOff({ amount_off: 10 }), /amount_off must be string/],
    [tenOff({ amount_off: '10.001' }), /amount_off must have at most 2 decimal places in USD/],
    [tenOff({ amount_off: '1.5', currency: 'JPY' }), /amount_off must have at most 0 decimal places in JPY/],
    [tenOff({ percentage_off: '10' }), /percentage_off is only allowed on percentage coupons/],
    [tenOff({ currency: 'US' }), /currency/],
    [tenOff({ currency: 'US1' }), /currency/],
    [percentOff({ currency: 'USD' }), /currency must not be set: a percentage coupon carries no currency/],
    [percentOff({ percentage_off: undefined }), /percentage_off is required for percentage coupons/],
    [percentOff({ percentage_off: '0' }), /percentage_off must be greater than 0 and at most 100/],
    [percentOff({ percentage_off: '100.5' }), /percentage_off must be greater than 0 and at most 100/],
    [percentOff({ percentage_off: '15%' }), /percentage_off/],
    [percentOff({ amount_off: '5' }), /amount_off is only allowed on fixed coupons/],
    [percentOff({ duration: 'weekly' }), /duration/],
    [percentOff({ cadence: 'repeating' }), /cadence/],
    [percentOff({ cadence: 'forever', duration: 'once' }), /cadence: forever contradicts duration once/],
    [percentOff({ duration: 'repeating' }), /duration_in_periods is required when duration is repeating/],
    [percentOff({ duration: 'repeating', duration_in_periods: 0 }), /duration_in_periods/],
    [percentOff({ duration: 'repeating', duration_in_periods: 1.5 }), /duration_in_periods/],
    [percentOff({ duration: 'once', duration_in_periods: 2 }), /duration_in_periods is only allowed when duration is repeating, not once/],
    [percentOff({ duration: 'forever', duration_in_periods: 2 }), /duration_in_periods is only allowed when duration is repeating, not forever/],
    [percentOff({ max_redemptions: 0 }), /max_redemptions/],
    [percentOff({ max_redemptions: -1 }), /max_redemptions/],
    [percentOff({ max_redemptions: 2.5 }), /max_redemptions/],
    [percentOff({ max_redemptions: '5' }), /max_redemptions/],
    [percentOff({ total_redemptions: 3 }), /total_redemptions/],
    [percentOff({ status: 'archived' }), /status/],
    [percentOff({ redeem_after: 'tomorrow' }), /redeem_after/],
    [percentOff({ redeem_after: '2026-01-01T00:00:00Z', redeem_before: '2026-01-01T00:00:00Z' }), /redeem_before must be after redeem_after/],
    [percentOff({ redeem_after: '2026-02-01T00:00:00Z', redeem_before: '2026-01-01T00:00:00Z' }), /redeem_before must be after redeem_after/],
    [percentOff({ rules: [] }), /rules/],
    [percentOff({ rules: 'all' }), /rules/],
    [percentOff({ metadata: { n: 1 } }), /metadata/],
  ]
  for (const [body, message] of cases) {
    assertError(await t.api.post('/v1/coupons', body), 400, 'validation_error', message)
  }
  assert.equal(await couponRows(t.scope), 0, 'no coupon was written')
  assert.equal((await t.api.get('/v1/coupons')).body.pagination.total, 0)
  assert.equal((await t.api.get('/v1/coupons?status=archived')).body.pagination.total, 0)
})

test('20 parallel redemptions against max_redemptions 5: exactly 5 succeed', async () => {
  const t = await tenant()
  const coupon = await created(t.api.post('/v1/coupons', tenOff({ max_redemptions: 5 })))
  const at = new Date('2026-03-01T00:00:00Z')
  const results = await Promise.allSettled(Array.from({ length: 20 }, () => redeemCoupon(p.ctx.orm.em.fork(), t.scope, coupon.id, at)))

  const succeeded = results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<any>).value.total_redemptions)
  assert.deepEqual(succeeded.sort(), [1, 2, 3, 4, 5], 'each success saw its own count')
  const failures = results.filter((r) => r.status === 'rejected').map((r) => (r).reason)
  assert.equal(failures.length, 15)
  for (const err of failures) {
    assert.ok(err instanceof InvalidOperationError, String(err))
    assert.equal(err.code, 'invalid_operation')
    assert.equal(err.message, `coupon ${coupon.id} cannot be redeemed: the coupon has reached its max_redemptions (5)`)
  }
  const after = (await t.api.get(`/v1/coupons/${coupon.id}`)).body
  assert.equal(after.total_redemptions, 5)
  assert.equal(after.max_redemptions, 5)
})

test('parallel redemptions without a limit lose no update', async () => {
  const t = await tenant()
  const coupon = await created(t.api.post('/v1/coupons', percentOff()))
  const results = await Promise.allSettled(Array.from({ length: 20 }, () => redeemCoupon(p.ctx.orm.em.fork(), t.scope, coupon.id, new Date())))
  assert.ok(results.every((r) => r.status === 'fulfilled'))
  assert.equal((await t.api.get(`/v1/coupons/${coupon.id}`)).body.total_redemptions, 20)
})

test('redemption is refused outside the window and for unknown or out-of-scope coupons, counting nothing', async () => {
  const t = await tenant()
  const coupon = await created(t.api.post('/v1/coupons', tenOff({ redeem_after: '2026-01-01T00:00:00Z', redeem_before: '2026-02-01T00:00:00Z' })))
  const redeem = (at: string, scope = t.scope, id = coupon.id) => redeemCoupon(p.ctx.orm.em.fork(), scope, id, new Date(at))
  const refused = (message: RegExp) => (err: unknown) => err instanceof InvalidOperationError && message.test(err.message)

  await assert.rejects(redeem('2025-12-31T23:59:59.999Z'), refused(/cannot be redeemed before 2026-01-01T00:00:00.000Z/))
  await assert.rejects(redeem('2026-02-01T00:00:00.000Z'), refused(/could only be redeemed before 2026-02-01T00:00:00.000Z/))
  assert.equal((await t.api.get(`/v1/coupons/${coupon.id}`)).body.total_redemptions, 0)

  const first = await redeem('2026-01-01T00:00:00.000Z')
  assert.equal(first.total_redemptions, 1)
  assert.equal(first.id, coupon.id)
  assert.equal(first.amount_off, '10.00')
  assert.ok(first.redeem_after instanceof Date)
  assert.equal((await redeem('2026-01-31T23:59:59.999Z')).total_redemptions, 2)

  const other = await tenant()
  const sandbox = { tenant_id: t.tenantId, environment_id: t.environments.development }
  for (const scope of [other.scope, sandbox]) {
    await assert.rejects(redeem('2026-01-15T00:00:00Z', scope), (err: unknown) => err instanceof NotFoundError && err.code === 'not_found')
  }
  await assert.rejects(redeem('2026-01-15T00:00:00Z', t.scope, 'coupon_unknown'), NotFoundError)
  assert.equal((await t.api.get(`/v1/coupons/${coupon.id}`)).body.total_redemptions, 2)
})

test("a redemption is part of the caller's transaction", async () => {
  const t = await tenant()
  const coupon = await created(t.api.post('/v1/coupons', tenOff({ max_redemptions: 1 })))
  await assert.rejects(
    p.ctx.orm.em.fork().transactional(async (tx) => {
      assert.equal((await redeemCoupon(tx, t.scope, coupon.id, new Date())).total_redemptions, 1)
      throw new Error('invoice failed')
    }),
    /invoice failed/,
  )
  assert.equal((await t.api.get(`/v1/coupons/${coupon.id}`)).body.total_redemptions, 0, 'rolled back with the caller')
  assert.equal((await redeemCoupon(p.ctx.orm.em.fork(), t.scope, coupon.id, new Date())).total_redemptions, 1)
})

test("coupons are isolated: another tenant and another environment see nothing and change nothing", async () => {
  const a = await tenant()
  const b = await tenant()
  const coupon = await created(a.api.post('/v1/coupons', tenOff({ name: 'A only' })))
  const sandbox = p.client(a.apiKey, a.environments.development)

  for (const api of [b.api, sandbox] as ApiClient[]) {
    assertError(await api.get(`/v1/coupons/${coupon.id}`), 404, 'not_found')
    assertError(await api.put(`/v1/coupons/${coupon.id}`, { name: 'hijacked', max_redemptions: 1 }), 404, 'not_found')
    assertError(await api.delete(`/v1/coupons/${coupon.id}`), 404, 'not_found')
    for (const query of ['', '?status=archived', '?type=fixed']) {
      assert.deepEqual((await api.get(`/v1/coupons${query}`)).body, { items: [], pagination: { limit: 50, offset: 0, total: 0 } })
    }
  }
  assert.deepEqual((await a.api.get(`/v1/coupons/${coupon.id}`)).body, coupon, "A's coupon is unchanged")

  const sbCoupon = await created(sandbox.post('/v1/coupons', tenOff({ name: 'sandbox' })))
  assert.equal(sbCoupon.environment_id, a.environments.development)
  assert.equal(sbCoupon.tenant_id, a.tenantId)
  assert.deepEqual((await a.api.get('/v1/coupons')).body.items.map((c: any) => c.id), [coupon.id])
  assert.deepEqual((await sandbox.get('/v1/coupons')).body.items.map((c: any) => c.id), [sbCoupon.id])
  assertError(await a.api.get(`/v1/coupons/${sbCoupon.id}`), 404, 'not_found')
})
