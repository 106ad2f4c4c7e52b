// The ledger under concurrency: every credit and debit locks the wallet row first, so duplicate
// idempotency keys apply exactly once and concurrent debits never overdraw a PREPAID wallet;
// the ledger always balances: sum(credits) - sum(debits) - sum(expiries) = derived balance.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { created } from '../../test/support/fixtures.js'
import { usePlatform } from '../../test/support/platform.js'
import { assertError } from '../../test/support/assertions.js'
import { D } from '../pricing/index.js'

const clock = new ManualClock(new Date('2026-11-10T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

async function sql(query: string, params: unknown[] = []): Promise<any[]> {
  return p.ctx.orm.em.fork().getConnection().execute(query, params)
}

/** The ledger identity, straight from Postgres. */
async function ledgerTotals(walletId: string) {
  const [row]: { credits: string; debits: string; expiries: string; debit_rows: number }[] = await sql(
    `SELECT coalesce(sum(credit_amount) FILTER (WHERE type = 'credit'), 0)::text AS credits,
            coalesce(sum(credit_amount) FILTER (WHERE type = 'debit'), 0)::text AS debits,
            coalesce(sum(credit_amount) FILTER (WHERE type = 'expiry'), 0)::text AS expiries,
            count(*) FILTER (WHERE type = 'debit')::int AS debit_rows
       FROM wallet_transactions WHERE wallet_id = ?`,
    [walletId],
  )
  const n = (v: string) => new D(v).toString()
  return { credits: n(row.credits), debits: n(row.debits), expiries: n(row.expiries), debit_rows: row.debit_rows, net: n(new D(row.credits).minus(row.debits).minus(row.expiries).toString()) }
}

async function newWallet() {
  const t = await p.newTenant()
  const customer = await created(t.api.post('/v1/customers', { external_id: 'busy' }))
  const w = await created(t.api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD', conversion_rate: '0.01' }), 200)
  return { api: t.api, w }
}

const statuses = (results: { status: number }[]) => results.map((r) => r.status).sort().join(',')

test('10 concurrent requests with one idempotency key apply exactly once, for top-ups and debits', async () => {
  const { api, w } = await newWallet()
  const tops = await Promise.all(Array.from({ length: 10 }, () =>
    api.post(`/v1/wallets/${w.id}/top-up`, { credits: '7', transaction_reason: 'PURCHASED', idempotency_key: 'same-top-up' })))
  assert.equal(statuses(tops), ['200', ...Array(9).fill('409')].join(','))
  for (const r of tops.filter((r) => r.status === 409)) assertError(r, 409, 'already_exists', /idempotency_key same-top-up/)

  const debits = await Promise.all(Array.from({ length: 10 }, () =>
    api.post(`/v1/wallets/${w.id}/debit`, { credits: '2', idempotency_key: 'same-debit' })))
  assert.equal(statuses(debits), ['201', ...Array(9).fill('409')].join(','))

  const totals = await ledgerTotals(w.id)
  assert.deepEqual([totals.credits, totals.debits, totals.debit_rows], ['7', '2', 1])
  assert.equal((await api.get(`/v1/wallets/${w.id}`)).body.balance, '5')
  const [events] = await sql(`SELECT count(*)::int AS n FROM system_events_outbox WHERE event_name = 'wallet.transaction_created' AND tenant_id = ?`, [w.tenant_id])
  assert.equal(events.n, 2)
})

test('20 concurrent debits against a PREPAID wallet: exactly the affordable ones succeed and the ledger balances', async () => {
  const { api, w } = await newWallet()
  // 3 x 3.35 = 10.05 credits, in three credits of different priorities and expiries.
  await created(api.post(`/v1/wallets/${w.id}/top-up`, { credits: '3.35', priority: 2, transaction_reason: 'PURCHASED', idempotency_key: 't1' }), 200)
  await created(api.post(`/v1/wallets/${w.id}/top-up`, { credits: '3.35', priority: 1, expiry_date: '2026-12-01T00:00:00Z', transaction_reason: 'PROMOTIONAL', idempotency_key: 't2' }), 200)
  await created(api.post(`/v1/wallets/${w.id}/top-up`, { credits: '3.35', transaction_reason: 'FREE_CREDIT', idempotency_key: 't3' }), 200)

  // 1.5 credits each: floor(10.05 / 1.5) = 6 succeed (9 credits), 14 are refused, 1.05 remain.
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    api.post(`/v1/wallets/${w.id}/debit`, { credits: '1.5', idempotency_key: `debit-${i}` })))
  const ok = results.filter((r) => r.status === 201)
  assert.equal(ok.length, 6, statuses(results))
  for (const r of results.filter((r) => r.status !== 201)) assertError(r, 400, 'invalid_operation', /insufficient balance/)
  // Each success saw the balance its predecessor left: 10.05 - 1.5k for k = 1..6, never below zero.
  assert.deepEqual(ok.map((r) => r.body.wallet.balance).sort(), ['1.05', '2.55', '4.05', '5.55', '7.05', '8.55'])

  const wallet = (await api.get(`/v1/wallets/${w.id}`)).body
  assert.deepEqual([wallet.balance, wallet.currency_balance], ['1.05', '0.01'])
  const totals = await ledgerTotals(w.id)
  assert.deepEqual([totals.credits, totals.debits, totals.expiries, totals.debit_rows], ['10.05', '9', '0', 6])
  assert.equal(totals.net, wallet.balance)
  // Every credit's consumption adds up: credit_amount - credits_available = what the debits took from it.
  const rows = await sql(`SELECT id, type, credit_amount::text, credits_available::text, consumed FROM wallet_transactions WHERE wallet_id = ?`, [w.id])
  const taken = new Map<string, InstanceType<typeof D>>()
  for (const r of rows.filter((r: any) => r.type === 'debit')) {
    for (const c of r.consumed) taken.set(c.credit_tx_id, (taken.get(c.credit_tx_id) ?? new D(0)).plus(c.credits))
  }
  for (const c of rows.filter((r: any) => r.type === 'credit')) {
    assert.equal(new D(c.credit_amount).minus(c.credits_available).toString(), (taken.get(c.id) ?? new D(0)).toString())
  }
})
