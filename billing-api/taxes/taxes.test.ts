// Tax rates and tax associations through the HTTP API, against the real Postgres.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ValidationError } from '../../platform/errors.js'
import { created } from '../../test/support/fixtures.js'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import type { Scope } from '../db/scope.js'
import { requirePublishedTaxRate } from './tax-rate.service.js'
import { assertError } from '../../test/support/assertions.js'

const p = usePlatform()


async function tenant() {
  const t = await p.newTenant()
  return { ...t, scope: { tenant_id: t.tenantId, environment_id: t.environments.production } }
}

/** Rows of a table for the scope, whatever their status. */
async function rows(table: 'tax_rates' | 'tax_associations', scope: Scope): Promise<number> {
  const [row] = await p.ctx.orm.em.getConnection().execute(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = ? AND environment_id = ?`, [scope.tenant_id, scope.environment_id])
  return row.n
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const vat = (over: object = {}) => ({ name: 'VAT DE', code: 'VAT-DE', percentage_value: '19', ...over })
const ecoFee = (over: object = {}) => ({ name: 'Eco fee', code: 'ECO', fixed_value: '2.5', currency: 'eur', ...over })
const list = async (api: ApiClient, path: string) => {
  const res = await api.get(path)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

async function subscriptionOf(api: ApiClient, externalId: string): Promise<{ customer: any; subscription: any }> {
  const customer = await created(api.post('/v1/customers', { external_id: externalId }))
  const plan = await created(api.post('/v1/plans', {
    name: 'basic',
    prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '10', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }],
  }))
  const subscription = await created(api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD' }))
  return { customer, subscription }
}

test('creates and reads percentage and fixed tax rates with their exact wire values', async () => {
  const t = await tenant()
  const rate = await created(t.api.post('/v1/taxes/rates', vat({ percentage_value: '19.00', description: 'German VAT', metadata: { region: 'de' } })))
  assert.match(rate.id, /^taxrate_[0-9A-Z]{26}$/)
  assert.match(rate.created_at, ISO)
  assert.deepEqual(rate, {
    id: rate.id, tenant_id: t.tenantId, environment_id: t.environments.production, status: 'published', metadata: { region: 'de' },
    created_at: rate.created_at, updated_at: rate.created_at, created_by: t.userId, updated_by: t.userId,
    name: 'VAT DE', code: 'VAT-DE', description: 'German VAT', percentage_value: '19', fixed_value: null, currency: null,
    tax_rate_type: 'PERCENTAGE', tax_rate_status: 'ACTIVE', scope: null,
  })
  assert.deepEqual((await t.api.get(`/v1/taxes/rates/${rate.id}`)).body, rate)

  const fee = await created(t.api.post('/v1/taxes/rates', ecoFee()))
  const { id, created_at, updated_at, ...rest } = fee
  assert.deepEqual(rest, {
    tenant_id: t.tenantId, environment_id: t.environments.production, status: 'published', metadata: {},
    created_by: t.userId, updated_by: t.userId, name: 'Eco fee', code: 'ECO', description: null,
    percentage_value: null, fixed_value: '2.50', currency: 'EUR', tax_rate_type: 'FIXED', tax_rate_status: 'ACTIVE', scope: null,
  })
  assert.deepEqual((await t.api.get(`/v1/taxes/rates/${id}`)).body, fee)

  assert.equal((await created(t.api.post('/v1/taxes/rates', vat({ code: 'ZERO', percentage_value: '0' })))).percentage_value, '0')
  assert.equal((await created(t.api.post('/v1/taxes/rates', vat({ code: 'ALL', percentage_value: '100' })))).percentage_value, '100')
  assert.equal((await created(t.api.post('/v1/taxes/rates', ecoFee({ code: 'JP', fixed_value: '300', currency: 'JPY' })))).fixed_value, '300')
  assert.equal((await created(t.api.post('/v1/taxes/rates', ecoFee({ code: 'FX', tax_rate_type: 'FIXED' })))).tax_rate_type, 'FIXED')
  assert.equal((await created(t.api.post('/v1/taxes/rates', ecoFee({ code: 'KW', fixed_value: '0.125', currency: 'KWD' })))).fixed_value, '0.125')
  assert.equal((await created(t.api.post('/v1/taxes/rates', ecoFee({ code: 'FREE', fixed_value: '0' })))).fixed_value, '0.00')
  assert.equal((await created(t.api.post('/v1/taxes/rates', vat({ code: '  PADDED  ' })))).code, 'PADDED')
  assertError(await t.api.get('/v1/taxes/rates/taxrate_unknown'), 404, 'not_found', /tax rate taxrate_unknown not found/)
})

test('lists tax rates filtered by status and code, paginated, in creation order', async () => {
  const t = await tenant()
  const codes = ['A', 'B', 'C', 'D']
  const rates = []
  for (const code of codes) rates.push(await created(t.api.post('/v1/taxes/rates', vat({ code }))))
  assert.equal((await t.api.put(`/v1/taxes/rates/${rates[1].id}`, { status: 'archived' })).status, 200)
  assert.equal((await t.api.delete(`/v1/taxes/rates/${rates[3].id}`)).status, 204)

  const page = async (query: string) => {
    const body = await list(t.api, `/v1/taxes/rates${query}`)
    return { codes: body.items.map((r: any) => r.code), pagination: body.pagination }
  }
  assert.deepEqual(await page(''), { codes: ['A', 'C'], pagination: { limit: 50, offset: 0, total: 2 } })
  assert.deepEqual(await page('?status=published'), { codes: ['A', 'C'], pagination: { limit: 50, offset: 0, total: 2 } })
  assert.deepEqual(await page('?status=archived'), { codes: ['B'], pagination: { limit: 50, offset: 0, total: 1 } })
  assert.deepEqual(await page('?code=C'), { codes: ['C'], pagination: { limit: 50, offset: 0, total: 1 } })
  assert.deepEqual(await page('?code=B'), { codes: [], pagination: { limit: 50, offset: 0, total: 0 } })
  assert.deepEqual(await page('?code=B&status=archived'), { codes: ['B'], pagination: { limit: 50, offset: 0, total: 1 } })
  assert.deepEqual(await page('?code=D'), { codes: [], pagination: { limit: 50, offset: 0, total: 0 } }, 'deleted rates are gone')
  assert.deepEqual(await page('?limit=1&offset=1'), { codes: ['C'], pagination: { limit: 1, offset: 1, total: 2 } })
  assert.deepEqual((await list(t.api, '/v1/taxes/rates?limit=1')).items[0], (await t.api.get(`/v1/taxes/rates/${rates[0].id}`)).body)

  assertError(await t.api.get('/v1/taxes/rates?limit=0'), 400, 'validation_error', /limit/)
  assertError(await t.api.get('/v1/taxes/rates?offset=-1'), 400, 'validation_error', /offset/)
  assertError(await t.api.get('/v1/taxes/rates?status=deleted'), 400, 'validation_error', /status/)
  assertError(await t.api.get('/v1/taxes/rates?percentage_value=19'), 400, 'validation_error', /percentage_value/)
})

test('updates change name, code, description, status and metadata, never what the rate charges', async () => {
  const t = await tenant()
  const rate = await created(t.api.post('/v1/taxes/rates', vat({ description: 'old' })))
  const res = await t.api.put(`/v1/taxes/rates/${rate.id}`, { name: 'VAT Germany', code: 'DE-VAT', description: null, status: 'archived', metadata: { v: '2' } })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const expected = { ...rate, name: 'VAT Germany', code: 'DE-VAT', description: null, status: 'archived', metadata: { v: '2' }, updated_at: res.body.updated_at, tax_rate_status: 'INACTIVE' }
  assert.deepEqual(res.body, expected)
  assert.ok(res.body.updated_at > rate.updated_at)
  assert.deepEqual((await t.api.get(`/v1/taxes/rates/${rate.id}`)).body, expected)
  assert.equal((await t.api.put(`/v1/taxes/rates/${rate.id}`, { status: 'published' })).body.status, 'published')

  for (const [body, field] of [
    [{ percentage_value: '20' }, /percentage_value/], [{ fixed_value: '1' }, /fixed_value/], [{ currency: 'EUR' }, /currency/],
    [{ status: 'deleted' }, /status/], [{ name: '' }, /name/], [{ code: '   ' }, /code must not be blank/], [{ metadata: { n: 1 } }, /metadata/],
  ] as [object, RegExp][]) {
    assertError(await t.api.put(`/v1/taxes/rates/${rate.id}`, body), 400, 'validation_error', field)
  }
  const now = (await t.api.get(`/v1/taxes/rates/${rate.id}`)).body
  assert.deepEqual(now, { ...expected, status: 'published', tax_rate_status: 'ACTIVE', updated_at: now.updated_at })
  assertError(await t.api.put('/v1/taxes/rates/taxrate_unknown', { name: 'x' }), 404, 'not_found')
})

test('a code is unique per environment among rates that are not deleted: 409 otherwise', async () => {
  const t = await tenant()
  const first = await created(t.api.post('/v1/taxes/rates', vat()))
  assertError(await t.api.post('/v1/taxes/rates', ecoFee({ code: 'VAT-DE' })), 409, 'already_exists', /a tax rate with code VAT-DE already exists/)
  assertError(await t.api.post('/v1/taxes/rates', vat({ code: ' VAT-DE ' })), 409, 'already_exists')
  assert.equal(await rows('tax_rates', t.scope), 1, 'nothing written')

  // An archived rate keeps its code.
  await t.api.put(`/v1/taxes/rates/${first.id}`, { status: 'archived' })
  assertError(await t.api.post('/v1/taxes/rates', vat()), 409, 'already_exists')

  // Renaming onto a taken code is a conflict too, and changes nothing.
  const other = await created(t.api.post('/v1/taxes/rates', vat({ code: 'OTHER' })))
  assertError(await t.api.put(`/v1/taxes/rates/${other.id}`, { code: 'VAT-DE', name: 'renamed' }), 409, 'already_exists')
  assert.deepEqual((await t.api.get(`/v1/taxes/rates/${other.id}`)).body, other)

  // Another environment and another tenant have their own codes.
  const sandbox = p.client(t.apiKey, t.environments.development)
  assert.equal((await created(sandbox.post('/v1/taxes/rates', vat()))).code, 'VAT-DE')
  assert.equal((await created((await tenant()).api.post('/v1/taxes/rates', vat()))).code, 'VAT-DE')

  // Deleting frees the code.
  assert.equal((await t.api.delete(`/v1/taxes/rates/${first.id}`)).status, 204)
  const again = await created(t.api.post('/v1/taxes/rates', vat()))
  assert.notEqual(again.id, first.id)

  // Concurrent creates of one code: the unique index lets exactly one through.
  const racing = await Promise.all(Array.from({ length: 8 }, (_, i) => t.api.post('/v1/taxes/rates', vat({ code: 'RACE', name: `r${i}` }))))
  assert.deepEqual(racing.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409])
  for (const r of racing.filter((r) => r.status === 409)) assert.equal(r.body.code, 'already_exists')
  assert.equal((await list(t.api, '/v1/taxes/rates?code=RACE')).pagination.total, 1)
})

test('every rule on create is enforced with a validation_error naming the field, and nothing is written', async () => {
  const t = await tenant()
  const cases: [object, RegExp][] = [
    [{ code: 'X', percentage_value: '1' }, /name/],
    [vat({ name: '' }), /name/],
    [{ name: 'x', percentage_value: '1' }, /code/],
    [vat({ code: '' }), /code/],
    [vat({ code: '   ' }), /code must not be blank/],
    [vat({ code: 'x'.repeat(256) }), /code/],
    [{ name: 'x', code: 'X' }, /percentage_value: one of percentage_value or fixed_value is required/],
    [vat({ fixed_value: '1', currency: 'USD' }), /fixed_value: set either percentage_value or fixed_value, not both/],
    [vat({ currency: 'USD' }), /currency: must not be set on a percentage tax rate/],
    [vat({ tax_rate_type: 'FIXED' }), /tax_rate_type: a FIXED rate sets fixed_value/],
    [ecoFee({ tax_rate_type: 'PERCENTAGE' }), /tax_rate_type: a PERCENTAGE rate sets percentage_value/],
    [vat({ tax_rate_type: 'COMPOUND' }), /tax_rate_type/],
    [vat({ percentage_value: '100.5' }), /percentage_value: must be between 0 and 100/],
    [vat({ percentage_value: '-1' }), /percentage_value/],
    [vat({ percentage_value: 19 }), /percentage_value must be string/],
    [ecoFee({ currency: undefined }), /currency: is required with fixed_value/],
    [ecoFee({ fixed_value: '-1' }), /fixed_value/],
    [ecoFee({ fixed_value: '1.005', currency: 'USD' }), /fixed_value: at most 2 decimal places in USD/],
    [ecoFee({ fixed_value: '1.5', currency: 'JPY' }), /fixed_value: at most 0 decimal places in JPY/],
    [ecoFee({ currency: 'EU' }), /currency/],
    [vat({ status: 'archived' }), /status/],
    [vat({ description: 'x'.repeat(2001) }), /description/],
    [vat({ metadata: { n: 1 } }), /metadata/],
    [vat({ rate: '19' }), /rate/],
  ]
  for (const [body, message] of cases) {
    assertError(await t.api.post('/v1/taxes/rates', body), 400, 'validation_error', message)
  }
  assert.equal(await rows('tax_rates', t.scope), 0, 'no tax rate was written')
})

test('requirePublishedTaxRate accepts only a published rate of the scope', async () => {
  const t = await tenant()
  const published = await created(t.api.post('/v1/taxes/rates', vat({ code: 'P' })))
  const archived = await created(t.api.post('/v1/taxes/rates', vat({ code: 'A' })))
  await t.api.put(`/v1/taxes/rates/${archived.id}`, { status: 'archived' })
  const deleted = await created(t.api.post('/v1/taxes/rates', vat({ code: 'D' })))
  await t.api.delete(`/v1/taxes/rates/${deleted.id}`)

  const check = (scope: Scope, id: string) => requirePublishedTaxRate(p.ctx.orm.em.fork(), scope, id)
  assert.equal((await check(t.scope, published.id)).code, 'P')
  const refused = (message: RegExp) => (err: unknown) => err instanceof ValidationError && err.field === 'tax_rate_id' && message.test(err.message)
  await assert.rejects(check(t.scope, archived.id), refused(/is archived; only published tax rates can be attached/))
  await assert.rejects(check(t.scope, deleted.id), refused(/not found/))
  await assert.rejects(check(t.scope, 'taxrate_unknown'), refused(/not found/))
  await assert.rejects(check((await tenant()).scope, published.id), refused(/not found/))
  await assert.rejects(check({ ...t.scope, environment_id: t.environments.development }, published.id), refused(/not found/))
})

test('tax associations attach a published rate to a customer, a subscription or the tenant', async () => {
  const t = await tenant()
  const { customer, subscription } = await subscriptionOf(t.api, 'cust-1')
  const rate = await created(t.api.post('/v1/taxes/rates', vat()))
  const fee = await created(t.api.post('/v1/taxes/rates', ecoFee()))

  const toCustomer = await created(t.api.post('/v1/taxes/associations', { tax_rate_id: rate.id, entity_type: 'customer', entity_id: customer.id }), 200)
  assert.match(toCustomer.id, /^taxassoc_[0-9A-Z]{26}$/)
  assert.deepEqual(toCustomer, {
    id: toCustomer.id, tenant_id: t.tenantId, environment_id: t.environments.production, status: 'published', metadata: {},
    created_at: toCustomer.created_at, updated_at: toCustomer.created_at, created_by: t.userId, updated_by: t.userId,
    tax_rate_id: rate.id, entity_type: 'customer', entity_id: customer.id, priority: 0, auto_apply: true, currency: null, tax_rate: null,
  })
  assert.deepEqual((await t.api.get(`/v1/taxes/associations/${toCustomer.id}`)).body, toCustomer)
  const toSubscription = await created(t.api.post('/v1/taxes/associations', {
    tax_rate_id: fee.id, entity_type: 'subscription', entity_id: subscription.id, priority: 5, auto_apply: false, metadata: { k: 'v' },
  }), 200)
  assert.deepEqual(
    [toSubscription.entity_type, toSubscription.entity_id, toSubscription.priority, toSubscription.auto_apply, toSubscription.metadata],
    ['subscription', subscription.id, 5, false, { k: 'v' }],
  )
  // tax_rate_code names the rate by its code (Flexprice's form)
  const toTenant = await created(t.api.post('/v1/taxes/associations', { tax_rate_code: rate.code, entity_type: 'tenant', entity_id: t.tenantId, priority: 1 }), 200)
  assert.equal(toTenant.tax_rate_id, rate.id)
  const toSubscription2 = await created(t.api.post('/v1/taxes/associations', { tax_rate_id: rate.id, entity_type: 'subscription', entity_id: subscription.id, priority: 1 }), 200)

  const ids = async (query: string) => {
    const body = await list(t.api, `/v1/taxes/associations${query}`)
    return { ids: body.items.map((a: any) => a.id), total: body.pagination.total }
  }
  // Ordered by priority, then creation.
  assert.deepEqual(await ids(''), { ids: [toCustomer.id, toTenant.id, toSubscription2.id, toSubscription.id], total: 4 })
  assert.deepEqual(await ids('?entity_type=subscription'), { ids: [toSubscription2.id, toSubscription.id], total: 2 })
  assert.deepEqual(await ids(`?entity_type=subscription&entity_id=${subscription.id}&tax_rate_id=${fee.id}`), { ids: [toSubscription.id], total: 1 })
  assert.deepEqual(await ids(`?entity_id=${customer.id}`), { ids: [toCustomer.id], total: 1 })
  assert.deepEqual(await ids(`?tax_rate_id=${rate.id}`), { ids: [toCustomer.id, toTenant.id, toSubscription2.id], total: 3 })
  assert.deepEqual(await ids('?entity_type=tenant'), { ids: [toTenant.id], total: 1 })
  assert.deepEqual((await list(t.api, '/v1/taxes/associations?limit=2&offset=1')).pagination, { limit: 2, offset: 1, total: 4 })
  assert.deepEqual(await ids('?limit=2&offset=1').then((r) => r.ids), [toTenant.id, toSubscription2.id])
  assertError(await t.api.get('/v1/taxes/associations?entity_type=invoice'), 400, 'validation_error', /entity_type/)
  assertError(await t.api.get('/v1/taxes/associations?status=deleted'), 400, 'validation_error', /status/)

  // The same rate twice on one entity is a conflict; once detached, it can be attached again.
  assertError(
    await t.api.post('/v1/taxes/associations', { tax_rate_id: rate.id, entity_type: 'customer', entity_id: customer.id, priority: 9 }),
    409, 'already_exists', new RegExp(`tax rate ${rate.id} is already associated with customer ${customer.id}`),
  )
  const del = await t.api.delete(`/v1/taxes/associations/${toCustomer.id}`)
  assert.equal(del.status, 200)
  assert.deepEqual(del.body, { ...toCustomer, status: 'deleted', updated_at: del.body.updated_at }, 'the delete answers the association as it left it')
  assertError(await t.api.get(`/v1/taxes/associations/${toCustomer.id}`), 404, 'not_found')
  assertError(await t.api.delete(`/v1/taxes/associations/${toCustomer.id}`), 404, 'not_found')
  assert.deepEqual((await ids(`?entity_id=${customer.id}`)).ids, [])
  const reattached = await created(t.api.post('/v1/taxes/associations', { tax_rate_id: rate.id, entity_type: 'customer', entity_id: customer.id }), 200)
  assert.deepEqual((await ids(`?entity_id=${customer.id}`)).ids, [reattached.id])
})

test('associations refuse rates that are not published and entities outside the scope, writing nothing', async () => {
  const t = await tenant()
  const { customer } = await subscriptionOf(t.api, 'cust-2')
  const archived = await created(t.api.post('/v1/taxes/rates', vat({ code: 'ARCH' })))
  await t.api.put(`/v1/taxes/rates/${archived.id}`, { status: 'archived' })
  const deleted = await created(t.api.post('/v1/taxes/rates', vat({ code: 'DEL' })))
  await t.api.delete(`/v1/taxes/rates/${deleted.id}`)
  const rate = await created(t.api.post('/v1/taxes/rates', vat()))
  const other = await tenant()
  const { customer: otherCustomer, subscription: otherSubscription } = await subscriptionOf(other.api, 'cust-2')
  const attach = (body: object) => t.api.post('/v1/taxes/associations', { tax_rate_id: rate.id, entity_type: 'customer', entity_id: customer.id, ...body })

  const cases: [object, RegExp][] = [
    [{ tax_rate_id: archived.id }, new RegExp(`tax_rate_id: tax rate ${archived.id} is archived; only published tax rates can be attached`)],
    [{ tax_rate_id: deleted.id }, new RegExp(`tax_rate_id: tax rate ${deleted.id} not found`)],
    [{ tax_rate_id: 'taxrate_unknown' }, /tax_rate_id: tax rate taxrate_unknown not found/],
    [{ entity_id: 'cust_unknown' }, /entity_id: customer cust_unknown not found/],
    [{ entity_id: otherCustomer.id }, /entity_id: customer .* not found/],
    [{ entity_type: 'subscription', entity_id: otherSubscription.id }, /entity_id: subscription .* not found/],
    [{ entity_type: 'subscription', entity_id: customer.id }, /entity_id: subscription .* not found/],
    [{ entity_type: 'tenant', entity_id: other.tenantId }, /entity_id: tenant .* not found/],
    [{ entity_type: 'invoice' }, /entity_type/],
    [{ priority: -1 }, /priority/],
    [{ priority: 1.5 }, /priority/],
    [{ auto_apply: 'yes' }, /auto_apply/],
    [{ tax_rate_id: undefined }, /tax_rate_id: give exactly one of tax_rate_id and tax_rate_code/],
    [{ tax_rate_code: 'VAT-DE' }, /tax_rate_id: give exactly one of tax_rate_id and tax_rate_code/],
    [{ tax_rate_id: undefined, tax_rate_code: 'ARCH' }, /tax_rate_code: no published tax rate with code ARCH/],
    [{ entity_id: undefined }, /entity_id/],
    [{ status: 'published' }, /status/],
  ]
  for (const [body, message] of cases) assertError(await attach(body), 400, 'validation_error', message)
  assert.equal(await rows('tax_associations', t.scope), 0, 'no association was written')

  // A rate in use cannot be deleted (archiving is the way out), until its associations are gone.
  const association = await created(attach({}), 200)
  assertError(await t.api.delete(`/v1/taxes/rates/${rate.id}`), 400, 'invalid_operation', /has 1 association\(s\); delete them first or archive the rate/)
  assert.equal((await t.api.get(`/v1/taxes/rates/${rate.id}`)).body.status, 'published')
  const removed = await t.api.delete(`/v1/taxes/associations/${association.id}`)
  assert.equal(removed.status, 200)
  assert.deepEqual(removed.body, { ...association, status: 'deleted', updated_at: removed.body.updated_at }, 'the delete answers the association as it left it')
  assert.equal((await t.api.delete(`/v1/taxes/rates/${rate.id}`)).status, 204)
  assertError(await t.api.get(`/v1/taxes/rates/${rate.id}`), 404, 'not_found')
  assertError(await t.api.delete(`/v1/taxes/rates/${rate.id}`), 404, 'not_found')
  assertError(await attach({}), 400, 'validation_error', /not found/)
})

test('tax rates and associations are isolated between tenants and environments', async () => {
  const a = await tenant()
  const b = await tenant()
  const sandbox = p.client(a.apiKey, a.environments.development)
  const { customer } = await subscriptionOf(a.api, 'cust-a')
  const rate = await created(a.api.post('/v1/taxes/rates', vat()))
  const association = await created(a.api.post('/v1/taxes/associations', { tax_rate_id: rate.id, entity_type: 'customer', entity_id: customer.id }), 200)

  for (const api of [b.api, sandbox]) {
    assertError(await api.get(`/v1/taxes/rates/${rate.id}`), 404, 'not_found')
    assertError(await api.put(`/v1/taxes/rates/${rate.id}`, { name: 'hijacked', status: 'archived' }), 404, 'not_found')
    assertError(await api.delete(`/v1/taxes/rates/${rate.id}`), 404, 'not_found')
    assertError(await api.get(`/v1/taxes/associations/${association.id}`), 404, 'not_found')
    assertError(await api.delete(`/v1/taxes/associations/${association.id}`), 404, 'not_found')
    for (const path of ['/v1/taxes/rates', '/v1/taxes/rates?status=archived', '/v1/taxes/rates?code=VAT-DE', '/v1/taxes/associations', `/v1/taxes/associations?entity_id=${customer.id}`]) {
      assert.deepEqual(await list(api, path), { items: [], pagination: { limit: 50, offset: 0, total: 0 } }, path)
    }
    // Nor can they attach A's rate to anything of theirs, or their rate to A's customer.
    const own = await created(api.post('/v1/taxes/rates', vat({ code: 'OWN' })))
    assertError(await api.post('/v1/taxes/associations', { tax_rate_id: rate.id, entity_type: 'tenant', entity_id: a.tenantId }), 400, 'validation_error', /tax_rate_id/)
    assertError(await api.post('/v1/taxes/associations', { tax_rate_id: own.id, entity_type: 'customer', entity_id: customer.id }), 400, 'validation_error', /entity_id/)
  }
  assert.deepEqual((await a.api.get(`/v1/taxes/rates/${rate.id}`)).body, rate, "A's rate is unchanged")
  assert.deepEqual((await a.api.get(`/v1/taxes/associations/${association.id}`)).body, association, "A's association is unchanged")
  assert.deepEqual((await list(a.api, '/v1/taxes/rates')).items.map((r: any) => r.id), [rate.id])
  assert.deepEqual((await list(a.api, '/v1/taxes/associations')).items.map((x: any) => x.id), [association.id])
  assert.equal(await rows('tax_associations', { tenant_id: b.tenantId, environment_id: b.environments.production }), 0)
  assert.equal(await rows('tax_associations', { tenant_id: a.tenantId, environment_id: a.environments.development }), 0)
})

test('an association\'s priority, auto_apply and metadata change in place; its rate and entity do not; another tenant cannot change it', async () => {
  const t = await tenant()
  const rate = await created(t.api.post('/v1/taxes/rates', vat()))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const a = await created(t.api.post('/v1/taxes/associations', { tax_rate_id: rate.id, entity_type: 'customer', entity_id: customer.id }), 200)
  const res = await t.api.put(`/v1/taxes/associations/${a.id}`, { priority: 2, auto_apply: false, metadata: { why: 'reduced' } })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body, { ...a, priority: 2, auto_apply: false, metadata: { why: 'reduced' }, updated_at: res.body.updated_at })
  assert.deepEqual((await t.api.get(`/v1/taxes/associations/${a.id}`)).body, res.body)
  assertError(await t.api.put(`/v1/taxes/associations/${a.id}`, { tax_rate_id: rate.id }), 400, 'validation_error', /tax_rate_id/)
  const other = await tenant()
  assertError(await other.api.put(`/v1/taxes/associations/${a.id}`, { priority: 9 }), 404, 'not_found')
  assert.equal((await t.api.get(`/v1/taxes/associations/${a.id}`)).body.priority, 2)
})
