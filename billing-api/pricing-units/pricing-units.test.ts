// Pricing units: CRUD, validation, code conflicts, isolation, and prices written in a unit,
// priced by the engine and on an invoice in the exact base-currency amount.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { created } from '../../test/support/fixtures.js'
import { usePlatform } from '../../test/support/platform.js'
import { PriceSchema } from '../plans/price.entity.js'
import { toPriceDefinition } from '../plans/price-definition.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { calculateAmount, toMoneyString } from '../pricing/index.js'

const p = usePlatform()

const credit = { name: 'Credit', code: 'credit', symbol: 'cr', base_currency: 'usd', conversion_rate: '0.01', metadata: { kind: 'prepaid' } }

const inCredits = (extra: object) =>
  ({ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', ...extra })

async function storedPrice(id: string) {
  return p.ctx.orm.em.fork().findOneOrFail(PriceSchema, { id })
}

test('pricing unit create, get, list, update, archive', async () => {
  const { api, tenantId, environments, userId } = await p.newTenant()
  const unit = await created(api.post('/v1/pricing-units', credit))
  assert.match(unit.id, /^punit_/)
  assert.deepEqual(
    [unit.name, unit.code, unit.symbol, unit.base_currency, unit.conversion_rate, unit.status, unit.tenant_id, unit.environment_id, unit.created_by],
    ['Credit', 'credit', 'cr', 'USD', '0.01', 'published', tenantId, environments.production, userId],
  )
  assert.deepEqual(unit.metadata, { kind: 'prepaid' })
  assert.deepEqual((await api.get(`/v1/pricing-units/${unit.id}`)).body, unit)
  const token = await created(api.post('/v1/pricing-units', { name: 'Token', code: 'token', base_currency: 'EUR', conversion_rate: '0.000001' }))
  assert.equal(token.symbol, null)
  assert.equal(token.conversion_rate, '0.000001')

  const list = (await api.get('/v1/pricing-units')).body
  assert.deepEqual(list.items.map((u: any) => u.id), [unit.id, token.id])
  assert.deepEqual(list.pagination, { limit: 50, offset: 0, total: 2 })
  assert.deepEqual((await api.get('/v1/pricing-units?code=token')).body.items.map((u: any) => u.id), [token.id])
  const page = (await api.get('/v1/pricing-units?limit=1&offset=1')).body
  assert.deepEqual(page.items.map((u: any) => u.id), [token.id])
  assert.deepEqual(page.pagination, { limit: 1, offset: 1, total: 2 })
  assertError(await api.get('/v1/pricing-units?offset=-1'), 400, 'validation_error', /offset/)

  const updated = await api.put(`/v1/pricing-units/${unit.id}`, { name: 'Credits', symbol: 'C', conversion_rate: '0.015', metadata: {} })
  assert.equal(updated.status, 200, JSON.stringify(updated.body))
  assert.deepEqual([updated.body.name, updated.body.symbol, updated.body.conversion_rate, updated.body.metadata, updated.body.code], ['Credits', 'C', '0.015', {}, 'credit'])
  assert.deepEqual((await api.get(`/v1/pricing-units/${unit.id}`)).body, updated.body)

  assert.equal((await api.delete(`/v1/pricing-units/${token.id}`)).status, 200)
  assert.equal((await api.get(`/v1/pricing-units/${token.id}`)).body.status, 'archived')
  assert.deepEqual((await api.get('/v1/pricing-units')).body.items.map((u: any) => u.id), [unit.id])
  assert.deepEqual((await api.get('/v1/pricing-units?status=archived')).body.items.map((u: any) => u.id), [token.id])
  assertError(await api.get('/v1/pricing-units/punit_unknown'), 404, 'not_found')
  assertError(await api.put('/v1/pricing-units/punit_unknown', { name: 'x' }), 404, 'not_found')
  assertError(await api.delete('/v1/pricing-units/punit_unknown'), 404, 'not_found')
})

test('pricing unit validation and code conflicts write nothing', async () => {
  const { api, apiKey, environments, tenantId } = await p.newTenant()
  const unit = await created(api.post('/v1/pricing-units', credit))
  const units = await countRows(p, 'pricing_units', tenantId)
  const invalid: [object, RegExp][] = [
    [{ ...credit, code: 'c2', conversion_rate: '0' }, /^conversion_rate must be greater than 0/],
    [{ ...credit, code: 'c2', conversion_rate: '0.000' }, /^conversion_rate must be greater than 0/],
    [{ ...credit, code: 'c2', conversion_rate: '-1' }, /conversion_rate must match pattern/],
    [{ ...credit, code: 'c2', conversion_rate: 0.01 }, /conversion_rate must be string/],
    [{ ...credit, code: 'c2', base_currency: 'US' }, /base_currency/],
    [{ ...credit, code: 'has space' }, /code must match pattern/],
    [{ ...credit, code: '' }, /code/],
    [{ ...credit, code: 'c2', name: undefined }, /name/],
    [{ ...credit, code: 'c2', symbol: 'x'.repeat(11) }, /symbol/],
    [{ ...credit, code: 'c2', status: 'archived' }, /status/],
  ]
  for (const [body, message] of invalid) assertError(await api.post('/v1/pricing-units', body), 400, 'validation_error', message)
  assertError(await api.post('/v1/pricing-units', { ...credit, name: 'Again' }), 409, 'already_exists', /code credit/)
  for (const [body, message] of [[{ code: 'other' }, /code/], [{ base_currency: 'EUR' }, /base_currency/], [{ conversion_rate: '0' }, /conversion_rate/]] as const) {
    assertError(await api.put(`/v1/pricing-units/${unit.id}`, body), 400, 'validation_error', message)
  }
  assert.equal(await countRows(p, 'pricing_units', tenantId), units)
  assert.deepEqual((await api.get(`/v1/pricing-units/${unit.id}`)).body, unit)
  // An archived unit keeps its code; another environment or tenant has its own codes.
  await api.delete(`/v1/pricing-units/${unit.id}`)
  assertError(await api.post('/v1/pricing-units', credit), 409, 'already_exists')
  await created(p.client(apiKey, environments.development).post('/v1/pricing-units', credit))
  await created((await p.newTenant()).api.post('/v1/pricing-units', credit))
})

test('a plan priced in credits: 150 credits at 0.01 USD prices exactly through the engine and on the invoice', async () => {
  const { api } = await p.newTenant()
  const unit = await created(api.post('/v1/pricing-units', credit))
  const plan = await created(api.post('/v1/plans', {
    name: 'Credits plan',
    prices: [
      inCredits({ price_unit_id: unit.id, price_unit_amount: '150' }),
      inCredits({ billing_model: 'TIERED', tier_mode: 'SLAB', price_unit_id: unit.id, price_unit_tiers: [{ up_to: 1, unit_amount: '1234.5' }, { up_to: null, unit_amount: '1', flat_amount: '10' }] }),
    ],
  }))
  const [flat, tiered] = plan.prices
  assert.deepEqual(
    [flat.price_unit, flat.price_unit_id, flat.price_unit_amount, flat.conversion_rate, flat.amount, flat.currency, flat.tiers, flat.price_unit_tiers],
    ['credit', unit.id, '150', '0.01', '1.5', 'USD', null, null],
  )
  assert.deepEqual(tiered.price_unit_tiers, [{ up_to: 1, unit_amount: '1234.5' }, { up_to: null, unit_amount: '1', flat_amount: '10' }])
  assert.deepEqual(tiered.tiers, [{ up_to: 1, unit_amount: '12.345' }, { up_to: null, unit_amount: '0.01', flat_amount: '0.1' }], 'tiers shown in USD')
  assert.deepEqual((await api.get(`/v1/prices/${flat.id}`)).body, flat)

  // 7 units x 150 credits x 0.01 USD = 10.50 USD, from the stored price.
  const seven = calculateAmount(toPriceDefinition(await storedPrice(flat.id)), '7')
  assert.equal(seven.price_unit_amount!.toString(), '1050')
  assert.equal(seven.amount.toString(), '10.5')
  assert.equal(toMoneyString(seven.amount, 'USD'), '10.50')
  // Slab: 1 x 1234.5 credits + 2 x 1 credit + 10 flat credits = 1246.5 credits = 12.465 USD -> 12.47 (half-up, once).
  const three = calculateAmount(toPriceDefinition(await storedPrice(tiered.id)), '3')
  assert.equal(three.price_unit_amount!.toString(), '1246.5')
  assert.equal(three.unrounded.toString(), '12.465')
  assert.equal(toMoneyString(three.amount, 'USD'), '12.47')

  // The same prices on a subscription invoice: 1 x 150 credits = 1.50 USD; 1 x 1234.5 credits = 12.345 -> 12.35 USD.
  const customer = await created(api.post('/v1/customers', { external_id: 'credits-customer' }))
  const sub = await created(api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: '2026-01-01T00:00:00Z' }))
  const preview = await api.post('/v1/invoices/internal/preview', { subscription_id: sub.id })
  assert.equal(preview.status, 200, JSON.stringify(preview.body))
  const amounts = Object.fromEntries(preview.body.line_items.map((l: any) => [l.price_id, l.amount]))
  assert.deepEqual(amounts, { [flat.id]: '1.50', [tiered.id]: '12.35' })
  assert.equal(preview.body.subtotal, '13.85')

  // The price keeps the rate it was created with.
  await api.put(`/v1/pricing-units/${unit.id}`, { conversion_rate: '0.02' })
  assert.equal((await api.get(`/v1/prices/${flat.id}`)).body.conversion_rate, '0.01')
  const later = await created(api.post('/v1/prices', { ...inCredits({ price_unit_id: unit.id, price_unit_amount: '150' }), entity_type: 'PLAN', entity_id: plan.id }))
  assert.deepEqual([later.conversion_rate, later.amount, later.sequence], ['0.02', '3', 3])
})

test('prices in a pricing unit are validated through the engine and write nothing when rejected', async () => {
  const { api, apiKey, environments, tenantId } = await p.newTenant()
  const unit = await created(api.post('/v1/pricing-units', credit))
  const euro = await created(api.post('/v1/pricing-units', { ...credit, code: 'eurocredit', base_currency: 'EUR' }))
  const archived = await created(api.post('/v1/pricing-units', { ...credit, code: 'old' }))
  await api.delete(`/v1/pricing-units/${archived.id}`)
  const sandboxUnit = await created(p.client(apiKey, environments.development).post('/v1/pricing-units', credit))
  const foreignUnit = await created((await p.newTenant()).api.post('/v1/pricing-units', credit))
  const plan = await created(api.post('/v1/plans', { name: 'P' }))
  const add = (extra: object) => api.post('/v1/prices', { ...inCredits(extra), entity_type: 'PLAN', entity_id: plan.id })
  const prices = await countRows(p, 'prices', tenantId)
  const cases: [Promise<{ status: number; body: any }>, RegExp][] = [
    [add({ price_unit_id: sandboxUnit.id, price_unit_amount: '1' }), /^price_unit_id: pricing unit .* not found/],
    [add({ price_unit_id: foreignUnit.id, price_unit_amount: '1' }), /^price_unit_id: pricing unit .* not found/],
    [add({ price_unit_id: archived.id, price_unit_amount: '1' }), /^price_unit_id: pricing unit .* not found/],
    [add({ price_unit_id: euro.id, price_unit_amount: '1' }), /^pricing_unit\.base_currency: .*must equal the price currency USD/],
    [add({ price_unit_id: unit.id, price_unit_amount: '1', amount: '1' }), /^amount is not allowed with price_unit_id/],
    [add({ price_unit_id: unit.id, billing_model: 'TIERED', tier_mode: 'VOLUME', tiers: [{ up_to: null, unit_amount: '1' }] }), /^tiers is not allowed with price_unit_id/],
    [add({ price_unit_id: unit.id }), /^price_unit_amount is required/],
    [add({ price_unit_id: unit.id, billing_model: 'TIERED', tier_mode: 'VOLUME' }), /TIERED prices need tier_mode and price_unit_tiers/],
    [add({ price_unit_id: unit.id, billing_model: 'TIERED', tier_mode: 'VOLUME', price_unit_tiers: [{ up_to: 5, unit_amount: '1' }, { up_to: 2, unit_amount: '1' }, { up_to: null, unit_amount: '1' }] }), /^price_unit_tiers\[1\]/],
    [add({ price_unit_id: unit.id, price_unit_amount: '1.5e3' }), /price_unit_amount must match pattern/],
    [add({ price_unit_tiers: [{ up_to: null, unit_amount: '1' }], billing_model: 'TIERED', tier_mode: 'VOLUME' }), /^price_unit_tiers requires price_unit_id/],
    [api.post('/v1/plans', { name: 'x', prices: [inCredits({ price_unit_id: euro.id, price_unit_amount: '1' })] }), /^prices\[0\]\.pricing_unit\.base_currency/],
  ]
  for (const [res, message] of cases) assertError(await res, 400, 'validation_error', message)
  assert.equal(await countRows(p, 'prices', tenantId), prices)
  assert.equal((await api.get(`/v1/plans/${plan.id}`)).body.max_price_sequence, 0)
})

test("tenants and environments never see each other's pricing units", async () => {
  const a = await p.newTenant()
  const b = await p.newTenant()
  const unit = await created(a.api.post('/v1/pricing-units', credit))
  for (const client of [b.api, p.client(a.apiKey, a.environments.development)]) {
    assertError(await client.get(`/v1/pricing-units/${unit.id}`), 404, 'not_found')
    assertError(await client.put(`/v1/pricing-units/${unit.id}`, { name: 'hijacked' }), 404, 'not_found')
    assertError(await client.delete(`/v1/pricing-units/${unit.id}`), 404, 'not_found')
    assert.deepEqual((await client.get('/v1/pricing-units')).body.items, [])
    assert.deepEqual((await client.get('/v1/pricing-units?code=credit')).body.items, [])
  }
  assert.deepEqual((await a.api.get(`/v1/pricing-units/${unit.id}`)).body, unit)
})
