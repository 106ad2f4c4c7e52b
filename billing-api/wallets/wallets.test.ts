// Wallets and their ledger through HTTP: create and read with the derived balance, the debit
// order, conversion rates, expired credits, PREPAID refusals and POSTPAID shortfalls, the
// prepaid_to_postpaid modification, and tenant + environment isolation.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { created } from '../../test/support/fixtures.js'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import { assertError, countRows } from '../../test/support/assertions.js'

const clock = new ManualClock(new Date('2026-11-10T00:00:00Z'))
const DAY = 86_400_000
const p = usePlatform({ services: ['billing-api'], clock })

const inDays = (n: number) => new Date(clock.now().getTime() + n * DAY).toISOString()

async function wallet(api: ApiClient, body: Record<string, unknown> = {}) {
  const customer = await created(api.post('/v1/customers', { external_id: `c-${Math.random()}` }))
  return created(api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD', ...body }), 200)
}

async function topUp(api: ApiClient, walletId: string, body: Record<string, unknown>) {
  return (await created(api.post(`/v1/wallets/${walletId}/top-up`, { transaction_reason: 'PURCHASED', idempotency_key: `k-${Math.random()}`, ...body }), 200)).transaction
}

async function transactions(api: ApiClient, walletId: string) {
  const res = await api.get(`/v1/wallets/${walletId}/transactions?limit=1000`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return new Map<string, any>(res.body.items.map((t: any) => [t.id, t]))
}

async function sql(query: string, params: unknown[] = []): Promise<any[]> {
  return p.ctx.orm.em.fork().getConnection().execute(query, params)
}

test('wallet create, get and list show the balance derived from the ledger; one live wallet per customer and currency', async () => {
  const { api, tenantId, environments, userId } = await p.newTenant()
  const customer = await created(api.post('/v1/customers', { external_id: 'holder' }))
  const w = await created(api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD', name: 'Main', conversion_rate: '0.5', metadata: { team: 'x' } }), 200)
  assert.match(w.id, /^wallet_/)
  assert.deepEqual({ ...w, id: undefined, created_at: undefined, updated_at: undefined }, {
    id: undefined, created_at: undefined, updated_at: undefined, tenant_id: tenantId, environment_id: environments.production,
    status: 'published', metadata: { team: 'x' }, created_by: userId, updated_by: userId,
    customer_id: customer.id, currency: 'USD', name: 'Main', wallet_type: 'PREPAID', conversion_rate: '0.5', balance: '0', currency_balance: '0.00',
    balance_alert: null, auto_topup: null, description: null, wallet_status: 'active', credit_balance: '0',
    alert_settings: null, alert_state: null, config: null, credits_available_breakdown: null, topup_conversion_rate: null,
  })
  assert.deepEqual((await api.get(`/v1/wallets/${w.id}`)).body, w)
  const [event] = await sql(`SELECT entity_type, payload FROM system_events_outbox WHERE event_name = 'wallet.created' AND entity_id = ?`, [w.id])
  assert.equal(event.entity_type, 'wallet')
  assert.equal(event.payload.customer_id, customer.id)

  assertError(await api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD' }), 409, 'already_exists', /already has a USD wallet/)
  const eur = await created(api.post('/v1/wallets', { customer_id: customer.id, currency: 'EUR', wallet_type: 'POSTPAID' }), 200)
  assert.deepEqual([eur.conversion_rate, eur.wallet_type, eur.name], ['1', 'POSTPAID', 'EUR wallet'])
  const other = await wallet(api)

  const tx = await topUp(api, w.id, { credits: '10.5' })
  assert.deepEqual([tx.type, tx.credit_amount, tx.credits_available, tx.amount, tx.transaction_reason], ['credit', '10.5', '10.5', '5.25', 'PURCHASED'])
  const read = (await api.get(`/v1/wallets/${w.id}`)).body
  assert.deepEqual([read.balance, read.currency_balance], ['10.5', '5.25'])
  const txEvents = await sql(`SELECT count(*)::int AS n FROM system_events_outbox WHERE event_name = 'wallet.transaction_created' AND entity_id = ?`, [tx.id])
  assert.equal(txEvents[0].n, 1)

  const list = (await api.get(`/v1/wallets?customer_id=${customer.id}`)).body
  assert.deepEqual(list.items.map((x: any) => [x.id, x.balance]), [[w.id, '10.5'], [eur.id, '0']])
  assert.deepEqual(list.pagination, { limit: 50, offset: 0, total: 2 })
  assert.deepEqual((await api.get('/v1/wallets?limit=1&offset=2')).body.items.map((x: any) => x.id), [other.id])
  assertError(await api.get('/v1/wallets/wallet_unknown'), 404, 'not_found')

  const invalid: [object, RegExp][] = [
    [{ customer_id: 'cust_unknown', currency: 'GBP' }, /^customer_id: customer .* not found/],
    [{ customer_id: customer.id, currency: 'usd' }, /currency must match pattern/],
    [{ customer_id: customer.id, currency: 'GBP', conversion_rate: '0' }, /^conversion_rate must be greater than 0/],
    [{ customer_id: customer.id, currency: 'GBP', conversion_rate: 1 }, /conversion_rate must be string/],
    [{ customer_id: customer.id, currency: 'GBP', wallet_type: 'CREDIT' }, /wallet_type must be equal to one of the allowed values/],
    [{ currency: 'GBP' }, /customer_id/],
  ]
  const wallets = await countRows(p, 'wallets', tenantId)
  for (const [body, message] of invalid) assertError(await api.post('/v1/wallets', body), 400, 'validation_error', message)
  assert.equal(await countRows(p, 'wallets', tenantId), wallets)
})

test("Flexprice's forms: description, initial_credits_to_load, credits_to_add and its reasons, update, searches, the balance read", async () => {
  const { api } = await p.newTenant()
  const customer = await created(api.post('/v1/customers', { external_id: 'sdk' }))
  const w = await created(api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD', description: 'Prepaid', initial_credits_to_load: '0.00', conversion_rate: '1' }), 200)
  assert.deepEqual([w.description, w.balance, w.wallet_status], ['Prepaid', '0', 'active'])
  const refused = await api.post('/v1/wallets', { customer_id: customer.id, currency: 'EUR', initial_credits_to_load: '5' })
  assertError(refused, 400, 'validation_error', /^initial_credits_to_load: a wallet is created empty/)

  const top = await created(api.post(`/v1/wallets/${w.id}/top-up`, { credits_to_add: '100.50', transaction_reason: 'PURCHASED_CREDIT_DIRECT', idempotency_key: 'k1' }), 200)
  assert.deepEqual([top.transaction.credit_amount, top.transaction.transaction_reason, top.wallet.balance, top.wallet.credit_balance], ['100.5', 'PURCHASED', '100.5', '100.5'])
  const free = await created(api.post(`/v1/wallets/${w.id}/top-up`, { credits: '2', transaction_reason: 'FREE_CREDIT_GRANT', idempotency_key: 'k2' }), 200)
  assert.equal(free.transaction.transaction_reason, 'FREE_CREDIT')
  const topUp = (body: object) => api.post(`/v1/wallets/${w.id}/top-up`, { transaction_reason: 'PURCHASED', idempotency_key: `k-${Math.random()}`, ...body })
  assertError(await topUp({ credits: '1', credits_to_add: '1' }), 400, 'validation_error', /credits_to_add: send credits or credits_to_add, not both/)
  assertError(await topUp({ credits: '1', transaction_reason: 'PURCHASED_CREDIT_INVOICED' }), 400, 'validation_error', /transaction_reason/)

  const updated = await api.put(`/v1/wallets/${w.id}`, { name: 'Main wallet', description: null, metadata: { k: 'v' } })
  assert.equal(updated.status, 200, JSON.stringify(updated.body))
  assert.deepEqual([updated.body.name, updated.body.description, updated.body.metadata, updated.body.balance], ['Main wallet', null, { k: 'v' }, '102.5'])
  assertError(await api.put(`/v1/wallets/${w.id}`, { balance: '1' }), 400, 'validation_error', /balance/)
  assertError(await api.put('/v1/wallets/wallet_unknown', { name: 'x' }), 404, 'not_found')

  const balance = (await api.get(`/v1/wallets/${w.id}/balance/real-time`)).body
  assert.deepEqual(balance, { ...updated.body, real_time_balance: null, real_time_credit_balance: null, balance_updated_at: null, current_period_usage: null, unpaid_invoices_amount: null })
  const other = await wallet(api)
  const wallets = (await api.post('/v1/wallets/search', { wallet_ids: [w.id] })).body
  assert.deepEqual([wallets.items.map((x: any) => x.id), wallets.pagination.total], [[w.id], 1])
  assert.equal((await api.post('/v1/wallets/search', {})).body.pagination.total, 2)
  const txs = (await api.post('/v1/wallets/transactions/search', { wallet_id: w.id })).body
  assert.deepEqual(txs.items.map((t: any) => t.id), [free.transaction.id, top.transaction.id])
  assert.deepEqual((await api.post('/v1/wallets/transactions/search', { transaction_reason: 'PURCHASED' })).body.items.map((t: any) => t.id), [top.transaction.id])
  assert.deepEqual((await api.post('/v1/wallets/transactions/search', { wallet_id: other.id })).body.items, [])
  assertError(await api.post('/v1/wallets/transactions/search', { type: 'refund' }), 400, 'validation_error', /type/)
})

test('a debit consumes credits by priority, then soonest expiry, then age, and records them in metadata.consumed_credit_tx_ids', async () => {
  const { api } = await p.newTenant()
  const w = await wallet(api)
  // Order: b (priority 0) -> c (priority 1, expires in 10 days) -> a (priority 1, 20 days) -> d (no priority).
  const a = await topUp(api, w.id, { credits: '10', priority: 1, expiry_date: inDays(20) })
  const b = await topUp(api, w.id, { credits: '5', priority: 0, transaction_reason: 'FREE_CREDIT' })
  const c = await topUp(api, w.id, { credits: '8', priority: 1, expiry_date: inDays(10), transaction_reason: 'PROMOTIONAL' })
  const d = await topUp(api, w.id, { credits: '100', expiry_date: inDays(1) })

  const first = await created(api.post(`/v1/wallets/${w.id}/debit`, { credits: '20', idempotency_key: 'd1', reference: 'usage-2026-11', metadata: { source: 'meter' } }))
  const debit = first.transaction
  // 20 = b 5 + c 8 + a 7
  assert.deepEqual(debit.metadata, { source: 'meter', consumed_credit_tx_ids: [b.id, c.id, a.id].join(',') })
  assert.deepEqual(debit.consumed, [{ credit_tx_id: b.id, credits: '5' }, { credit_tx_id: c.id, credits: '8' }, { credit_tx_id: a.id, credits: '7' }])
  assert.deepEqual([debit.type, debit.transaction_reason, debit.credit_amount, debit.credits_unfunded, debit.amount, debit.reference], ['debit', 'USAGE', '20', '0', '20', 'usage-2026-11'])
  assert.equal(first.wallet.balance, '103')
  let txs = await transactions(api, w.id)
  assert.deepEqual([a, b, c, d].map((t) => txs.get(t.id).credits_available), ['3', '0', '0', '100'])

  // 4 more = a's last 3 + d 1
  const second = (await created(api.post(`/v1/wallets/${w.id}/debit`, { credits: '4', idempotency_key: 'd2' }))).transaction
  assert.equal(second.metadata.consumed_credit_tx_ids, [a.id, d.id].join(','))
  txs = await transactions(api, w.id)
  assert.deepEqual([a, b, c, d].map((t) => txs.get(t.id).credits_available), ['0', '0', '0', '99'])
  assert.equal((await api.get(`/v1/wallets/${w.id}`)).body.balance, '99')

  // Newest first, paginated.
  const page = (await api.get(`/v1/wallets/${w.id}/transactions?limit=2`)).body
  assert.deepEqual(page.items.map((t: any) => t.id), [second.id, debit.id])
  assert.deepEqual(page.pagination, { limit: 2, offset: 0, total: 6 })
})

test('conversion rate: debits in currency become exact credits (rounded up at 12 decimals) and currency_balance rounds half-up', async () => {
  const { api } = await p.newTenant()
  const w = await wallet(api, { conversion_rate: '3' })
  // 10 credits at 3 per credit: 30.00
  await topUp(api, w.id, { credits: '10' })
  // 10 USD = 3.333333333333... credits, rounded UP: 3.333333333334
  const r = await created(api.post(`/v1/wallets/${w.id}/debit`, { amount: '10', idempotency_key: 'usd' }))
  assert.deepEqual([r.transaction.credit_amount, r.transaction.amount, r.transaction.conversion_rate], ['3.333333333334', '10', '3'])
  // 10 - 3.333333333334 = 6.666666666666 credits = 19.999999999998 USD -> 20.00
  assert.deepEqual([r.wallet.balance, r.wallet.currency_balance], ['6.666666666666', '20.00'])
  // A 1 USD top-up buys 0.333333333333 credits (rounded DOWN): 6.999999999999 credits = 20.999999999997 -> 21.00
  const t = await topUp(api, w.id, { amount: '1' })
  assert.deepEqual([t.credit_amount, t.amount], ['0.333333333333', '1'])
  const read = (await api.get(`/v1/wallets/${w.id}`)).body
  assert.deepEqual([read.balance, read.currency_balance], ['6.999999999999', '21.00'])

  // JPY has no minor unit: 0.4 credits at 1.25 = 0.5 JPY -> 1 (half-up)
  const jpy = await wallet(api, { currency: 'JPY', conversion_rate: '1.25' })
  await topUp(api, jpy.id, { credits: '0.4' })
  assert.equal((await api.get(`/v1/wallets/${jpy.id}`)).body.currency_balance, '1')
})

test('expired credits are never consumed and leave the balance', async () => {
  const { api } = await p.newTenant()
  const w = await wallet(api)
  const soon = await topUp(api, w.id, { credits: '50', priority: 0, expiry_date: inDays(1) })
  const lasting = await topUp(api, w.id, { credits: '5', priority: 9 })
  assert.equal((await api.get(`/v1/wallets/${w.id}`)).body.balance, '55')
  clock.advance(DAY) // expiry_date <= now: expired
  assert.equal((await api.get(`/v1/wallets/${w.id}`)).body.balance, '5')
  const debit = (await created(api.post(`/v1/wallets/${w.id}/debit`, { credits: '2', idempotency_key: 'after-expiry' }))).transaction
  assert.equal(debit.metadata.consumed_credit_tx_ids, lasting.id)
  assertError(await api.post(`/v1/wallets/${w.id}/debit`, { credits: '4', idempotency_key: 'too-much' }), 400, 'invalid_operation', /insufficient balance/)
  const txs = await transactions(api, w.id)
  assert.deepEqual([txs.get(soon.id).credits_available, txs.get(lasting.id).credits_available], ['50', '3'])
  assertError(await api.post(`/v1/wallets/${w.id}/top-up`, { credits: '1', transaction_reason: 'PURCHASED', idempotency_key: 'past', expiry_date: clock.now().toISOString() }), 400, 'validation_error', /^expiry_date must be in the future/)
})

test('every refusal writes nothing; a duplicate idempotency key is a 409 that applies nothing', async () => {
  const { api, tenantId } = await p.newTenant()
  const w = await wallet(api)
  await topUp(api, w.id, { credits: '10', idempotency_key: 'first' })
  await created(api.post(`/v1/wallets/${w.id}/debit`, { credits: '1', idempotency_key: 'spend' }))
  const counts = async () => [await countRows(p, 'wallet_transactions', tenantId), await countRows(p, 'system_events_outbox', tenantId)]
  const before = await counts()
  const top = (body: object) => api.post(`/v1/wallets/${w.id}/top-up`, { credits: '1', transaction_reason: 'PURCHASED', idempotency_key: 'x', ...body })
  const debit = (body: object) => api.post(`/v1/wallets/${w.id}/debit`, { credits: '1', idempotency_key: 'y', ...body })

  // The same key again, with other amounts: refused, nothing applied (top-up and debit keys share one space per wallet).
  assertError(await top({ idempotency_key: 'first', credits: '99' }), 409, 'already_exists', /idempotency_key first/)
  assertError(await top({ idempotency_key: 'spend' }), 409, 'already_exists')
  assertError(await debit({ idempotency_key: 'spend' }), 409, 'already_exists')
  assertError(await debit({ idempotency_key: 'first' }), 409, 'already_exists')
  assertError(await debit({ credits: '9.000000000001' }), 400, 'invalid_operation', /insufficient balance: wallet .* has 9 credits, the debit needs 9.000000000001/)
  for (const [res, message] of [
    [await top({ credits: undefined }), /^exactly one of credits and amount is required/],
    [await top({ amount: '1' }), /^exactly one of credits and amount is required/],
    [await top({ credits: '0' }), /^credits must be greater than 0/],
    [await top({ credits: '-1' }), /credits must match pattern/],
    [await top({ credits: 1 }), /credits must be string/],
    [await top({ idempotency_key: undefined }), /idempotency_key/],
    [await top({ idempotency_key: '' }), /idempotency_key/],
    [await top({ transaction_reason: 'GIFT' }), /transaction_reason must be equal to one of the allowed values/],
    [await top({ priority: 1.5 }), /priority/],
    [await top({ expiry_date: 'soon' }), /expiry_date/],
    [await debit({ idempotency_key: undefined }), /idempotency_key/],
    [await debit({ credits: undefined }), /^exactly one of credits and amount is required/],
    [await debit({ amount: '0' , credits: undefined }), /^amount must be worth more than 0 credits/],
    [await debit({ surprise: 1 }), /surprise/],
  ] as const) assertError(res, 400, 'validation_error', message)
  assertError(await api.post('/v1/wallets/wallet_unknown/debit', { credits: '1', idempotency_key: 'z' }), 404, 'not_found')
  assertError(await api.post('/v1/wallets/wallet_unknown/top-up', { credits: '1', transaction_reason: 'PURCHASED', idempotency_key: 'z' }), 404, 'not_found')
  assert.deepEqual(await counts(), before)
  assert.equal((await api.get(`/v1/wallets/${w.id}`)).body.balance, '9')
})

test('a POSTPAID wallet goes below zero, recording the shortfall as unfunded; prepaid_to_postpaid answers original and updated', async () => {
  const { api } = await p.newTenant()
  const w = await wallet(api, { conversion_rate: '2' })
  const credit = await topUp(api, w.id, { credits: '3' })
  assertError(await api.post(`/v1/wallets/${w.id}/debit`, { credits: '5', idempotency_key: 'big' }), 400, 'invalid_operation')

  const res = await api.post(`/v1/wallets/${w.id}/modify`, { modification_type: 'prepaid_to_postpaid' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual([res.body.original.wallet_type, res.body.updated.wallet_type], ['PREPAID', 'POSTPAID'])
  assert.deepEqual({ ...res.body.original, wallet_type: undefined, updated_at: undefined }, { ...w, balance: '3', credit_balance: '3', currency_balance: '6.00', wallet_type: undefined, updated_at: undefined })
  assert.deepEqual(res.body.updated, (await api.get(`/v1/wallets/${w.id}`)).body)
  assertError(await api.post(`/v1/wallets/${w.id}/modify`, { modification_type: 'prepaid_to_postpaid' }), 400, 'invalid_operation', /POSTPAID, not PREPAID/)
  assertError(await api.post(`/v1/wallets/${w.id}/modify`, { modification_type: 'postpaid_to_prepaid' }), 400, 'validation_error', /modification_type/)
  assertError(await api.post(`/v1/wallets/${w.id}/modify`, {}), 400, 'validation_error', /modification_type/)

  // 5 credits: 3 from the credit, 2 unfunded -> balance -2 credits = -4.00 USD
  const r = await created(api.post(`/v1/wallets/${w.id}/debit`, { credits: '5', idempotency_key: 'big' }))
  assert.deepEqual([r.transaction.credits_unfunded, r.transaction.metadata.consumed_credit_tx_ids], ['2', credit.id])
  assert.deepEqual([r.wallet.balance, r.wallet.currency_balance], ['-2', '-4.00'])
  // Nothing left to consume: the whole debit is unfunded and consumes no credit.
  const none = (await created(api.post(`/v1/wallets/${w.id}/debit`, { amount: '1', idempotency_key: 'more' }))).transaction
  assert.deepEqual([none.credit_amount, none.credits_unfunded, none.metadata.consumed_credit_tx_ids, none.consumed], ['0.5', '0.5', '', []])
  await topUp(api, w.id, { credits: '10' })
  assert.deepEqual((await api.get(`/v1/wallets/${w.id}`)).body.balance, '7.5')
})

test("tenants and environments never see each other's wallets", async () => {
  const a = await p.newTenant()
  const b = await p.newTenant()
  const w = await wallet(a.api)
  await topUp(a.api, w.id, { credits: '10', idempotency_key: 'mine' })
  const sandbox = p.client(a.apiKey, a.environments.development)
  for (const client of [b.api, sandbox]) {
    assertError(await client.get(`/v1/wallets/${w.id}`), 404, 'not_found')
    assertError(await client.get(`/v1/wallets/${w.id}/transactions`), 404, 'not_found')
    assertError(await client.post(`/v1/wallets/${w.id}/top-up`, { credits: '1', transaction_reason: 'PURCHASED', idempotency_key: 'steal' }), 404, 'not_found')
    assertError(await client.post(`/v1/wallets/${w.id}/debit`, { credits: '1', idempotency_key: 'steal' }), 404, 'not_found')
    assertError(await client.post(`/v1/wallets/${w.id}/modify`, { modification_type: 'prepaid_to_postpaid' }), 404, 'not_found')
    assert.deepEqual((await client.get('/v1/wallets')).body.items, [])
    assert.deepEqual((await client.get(`/v1/wallets?customer_id=${w.customer_id}`)).body.items, [])
    assertError(await client.post('/v1/wallets', { customer_id: w.customer_id, currency: 'EUR' }), 400, 'validation_error', /^customer_id: customer .* not found/)
  }
  // The sandbox's own wallet for its own customer stays there.
  const sandboxWallet = await wallet(sandbox)
  assert.deepEqual((await sandbox.get('/v1/wallets')).body.items.map((x: any) => x.id), [sandboxWallet.id])
  assert.deepEqual((await a.api.get('/v1/wallets')).body.items.map((x: any) => [x.id, x.balance]), [[w.id, '10']])
  assert.equal((await a.api.get(`/v1/wallets/${w.id}/transactions`)).body.items.length, 1)
})
