// A customer's wallets as a list (GET /customers/{id}/wallets, GET /customers/wallets) and wallet
// termination: the wallet closes, its remaining credits are forfeited by WALLET_TERMINATED
// expiry rows, it takes no more ledger writes, and the currency is free for a new wallet.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { created } from '../../test/support/fixtures.js'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import { assertError, countRows } from '../../test/support/assertions.js'

const clock = new ManualClock(new Date('2026-11-10T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

async function customerWithWallet(api: ApiClient, externalId: string, body: Record<string, unknown> = {}) {
  const customer = await created(api.post('/v1/customers', { external_id: externalId }))
  const wallet = await created(api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD', ...body }), 200)
  return { customer, wallet }
}

const key = () => `k-${Math.random()}`

test('a customer\'s wallets by id or lookup key, as a list of the spec\'s form; bad and foreign references refused', async () => {
  const { api } = await p.newTenant()
  const { customer, wallet } = await customerWithWallet(api, 'acme')
  const eur = await created(api.post('/v1/wallets', { customer_id: customer.id, currency: 'EUR' }), 200)
  await customerWithWallet(api, 'someone-else')

  const byId = await api.get(`/v1/customers/${customer.id}/wallets`)
  assert.equal(byId.status, 200, JSON.stringify(byId.body))
  assert.deepEqual(byId.body.items.map((w: any) => [w.id, w.currency, w.balance, w.wallet_status]), [[wallet.id, 'USD', '0', 'active'], [eur.id, 'EUR', '0', 'active']])
  assert.deepEqual(byId.body.pagination, { limit: 50, offset: 0, total: 2 })
  const second = (await api.get(`/v1/customers/${customer.id}/wallets?limit=1&offset=1`)).body
  assert.deepEqual([second.items.map((w: any) => w.id), second.pagination], [[eur.id], { limit: 1, offset: 1, total: 2 }])
  assert.deepEqual((await api.get(`/v1/customers/wallets?id=${customer.id}&from_cache=false&include_real_time_balance=false`)).body, byId.body)
  assert.deepEqual((await api.get('/v1/customers/wallets?lookup_key=acme')).body, byId.body)

  assertError(await api.get('/v1/customers/wallets'), 400, 'validation_error', /exactly one of id and lookup_key/)
  assertError(await api.get(`/v1/customers/wallets?id=${customer.id}&lookup_key=acme`), 400, 'validation_error')
  assertError(await api.get(`/v1/customers/wallets?id=${customer.id}&include_real_time_balance=true`), 400, 'validation_error')
  assertError(await api.get('/v1/customers/wallets?lookup_key=nobody'), 404, 'not_found')
  assertError(await api.get('/v1/customers/cust_nobody/wallets'), 404, 'not_found')

  const other = await p.newTenant()
  assertError(await other.api.get(`/v1/customers/${customer.id}/wallets`), 404, 'not_found')
  assertError(await other.api.get('/v1/customers/wallets?lookup_key=acme'), 404, 'not_found')
})

test('terminate: closed, the 80.5 credits left forfeited, no further writes, the currency free again', async () => {
  const { api, tenantId } = await p.newTenant()
  const { customer, wallet } = await customerWithWallet(api, 'holder')
  await created(api.post(`/v1/wallets/${wallet.id}/top-up`, { credits: '60', transaction_reason: 'PURCHASED', idempotency_key: key() }), 200)
  await created(api.post(`/v1/wallets/${wallet.id}/top-up`, { credits: '40.5', transaction_reason: 'FREE_CREDIT', idempotency_key: key() }), 200)
  // 20 taken from the first (purchased) credit: 40 + 40.5 = 80.5 left
  await created(api.post(`/v1/wallets/${wallet.id}/debit`, { credits: '20', idempotency_key: key() }))

  const other = await p.newTenant()
  assertError(await other.api.post(`/v1/wallets/${wallet.id}/terminate`, {}), 404, 'not_found')

  const res = await api.post(`/v1/wallets/${wallet.id}/terminate`, {})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual([res.body.wallet_status, res.body.status, res.body.balance, res.body.currency_balance], ['closed', 'archived', '0', '0.00'])
  assert.deepEqual((await api.get(`/v1/wallets/${wallet.id}`)).body, res.body)

  const ledger = (await api.get(`/v1/wallets/${wallet.id}/transactions?limit=100`)).body.items
  const forfeited = ledger.filter((t: any) => t.transaction_reason === 'WALLET_TERMINATED')
  assert.deepEqual(forfeited.map((t: any) => [t.type, t.credit_amount]).sort(), [['expiry', '40'], ['expiry', '40.5']])
  assert.ok(ledger.filter((t: any) => t.type === 'credit').every((t: any) => t.credits_available === '0'))

  const rows = await countRows(p, 'wallet_transactions', tenantId)
  assertError(await api.post(`/v1/wallets/${wallet.id}/top-up`, { credits: '1', transaction_reason: 'PURCHASED', idempotency_key: key() }), 400, 'invalid_operation', /closed/)
  assertError(await api.post(`/v1/wallets/${wallet.id}/terminate`, {}), 400, 'invalid_operation', /closed/)
  assert.equal(await countRows(p, 'wallet_transactions', tenantId), rows)

  const next = await created(api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD' }), 200)
  assert.deepEqual((await api.get(`/v1/customers/${customer.id}/wallets`)).body.items.map((w: any) => [w.id, w.wallet_status]), [[wallet.id, 'closed'], [next.id, 'active']])
  // the list of wallets shows live ones only
  assert.deepEqual((await api.get(`/v1/wallets?customer_id=${customer.id}`)).body.items.map((w: any) => w.id), [next.id])
})

test('terminate refuses a POSTPAID wallet below zero and changes nothing', async () => {
  const { api, tenantId } = await p.newTenant()
  const { wallet } = await customerWithWallet(api, 'owes', { wallet_type: 'POSTPAID' })
  await created(api.post(`/v1/wallets/${wallet.id}/debit`, { credits: '5', idempotency_key: key() }))
  const rows = await countRows(p, 'wallet_transactions', tenantId)
  assertError(await api.post(`/v1/wallets/${wallet.id}/terminate`, {}), 400, 'invalid_operation', /-5 credits/)
  assert.equal(await countRows(p, 'wallet_transactions', tenantId), rows)
  assert.equal((await api.get(`/v1/wallets/${wallet.id}`)).body.wallet_status, 'active')
})
