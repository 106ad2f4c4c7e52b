// Balance alert and auto top-up through HTTP: the alert fires once per crossing, an invoiced
// top-up creates exactly one finalized WALLET_AUTO_TOPUP invoice, an unpaid one blocks the next,
// its payment credits the wallet exactly and re-arms (or re-publishes) the alert; instant mode
// credits at once; settings validation.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { assertError } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import { billedInvoices } from '../../test/support/invoices.js'
import { nextSettings } from './settings.js'

const clock = new ManualClock(new Date('2026-11-10T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

async function sql(query: string, params: unknown[] = []): Promise<any[]> {
  return p.ctx.orm.em.fork().getConnection().execute(query, params)
}

let keys = 0
const debit = (api: ApiClient, walletId: string, credits: string) =>
  created(api.post(`/v1/wallets/${walletId}/debit`, { credits, idempotency_key: `d-${++keys}` }))
const topUp = (api: ApiClient, walletId: string, credits: string, reason = 'FREE_CREDIT') =>
  created(api.post(`/v1/wallets/${walletId}/top-up`, { credits, transaction_reason: reason, idempotency_key: `t-${++keys}` }), 200)

async function alerts(walletId: string) {
  return (await sql(`SELECT payload FROM system_events_outbox WHERE event_name = 'wallet.balance_alert' AND entity_id = ? ORDER BY created_at, id`, [walletId]))
    .map((r) => [r.payload.cause, r.payload.balance, r.payload.threshold])
}

async function alertTopUps(walletId: string) {
  return (await sql(`SELECT payload FROM system_events_outbox WHERE event_name = 'wallet.balance_alert' AND entity_id = ? ORDER BY created_at, id`, [walletId]))
    .map((r) => r.payload.auto_topup)
}

async function topUpInvoices(walletId: string) {
  return sql(
    `SELECT id, invoice_type, invoice_status, payment_status, billing_reason, total::text, amount_due::text, invoice_number, metadata
       FROM invoices WHERE billing_reason = 'WALLET_AUTO_TOPUP' AND metadata->>'wallet_id' = ? ORDER BY created_at, id`, [walletId])
}

async function setup(settings: Record<string, unknown>) {
  const t = await p.newTenant()
  const customer = await created(t.api.post('/v1/customers', { external_id: `c-${Math.random().toString(36).slice(2)}` }))
  // 1 credit = 0.50 USD
  const wallet = await created(t.api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD', conversion_rate: '0.5', ...settings }), 200)
  return { t, customer, wallet }
}

test('settings: validation is pure and the wallet shows them', async () => {
  const base = { alert_threshold: null, alert_state: 'armed' as const, auto_topup_enabled: false, auto_topup_amount: null, auto_topup_mode: null, conversion_rate: '0.5', currency: 'USD' }
  assert.throws(() => nextSettings(base, { auto_topup: { enabled: true, amount: '10', mode: 'invoiced' } }), /balance_alert.threshold/)
  assert.throws(() => nextSettings(base, { balance_alert: { threshold: '5' }, auto_topup: { enabled: true, mode: 'invoiced' } }), /auto_topup.amount is required/)
  assert.throws(() => nextSettings(base, { balance_alert: { threshold: '5' }, auto_topup: { enabled: true, amount: '10' } }), /auto_topup.mode is required/)
  // 0.009 credits x 0.5 = 0.0045 USD, which rounds to 0.00
  assert.throws(() => nextSettings(base, { auto_topup: { enabled: false, amount: '0.009' } }), /worth more than 0 USD/)
  assert.deepEqual(nextSettings({ ...base, alert_state: 'alerted', alert_threshold: '5' }, { balance_alert: { threshold: '7.50' } }), {
    alert_threshold: '7.5', alert_state: 'armed', auto_topup_enabled: false, auto_topup_amount: null, auto_topup_mode: null,
  })

  const { t, wallet } = await setup({ balance_alert: { threshold: '20' }, auto_topup: { enabled: true, amount: '100', mode: 'invoiced' } })
  assert.deepEqual([wallet.balance_alert, wallet.auto_topup], [{ threshold: '20', state: 'armed' }, { enabled: true, amount: '100', mode: 'invoiced' }])
  assertError(await t.api.put(`/v1/wallets/${wallet.id}/settings`, { balance_alert: null }), 400, 'validation_error', /balance_alert/)
  assertError(await t.api.put(`/v1/wallets/${wallet.id}/settings`, { auto_topup: { enabled: true, amount: 5, mode: 'invoiced' } }), 400, 'validation_error')
  assertError(await t.api.put(`/v1/wallets/${wallet.id}/settings`, {}), 400, 'validation_error')
  const off = await t.api.put(`/v1/wallets/${wallet.id}/settings`, { auto_topup: null, balance_alert: { threshold: '3' } })
  assert.equal(off.status, 200, JSON.stringify(off.body))
  assert.deepEqual([off.body.balance_alert, off.body.auto_topup], [{ threshold: '3', state: 'armed' }, null])
  assert.deepEqual((await t.api.get(`/v1/wallets/${wallet.id}`)).body.balance_alert, { threshold: '3', state: 'armed' })
  const other = await p.newTenant()
  assertError(await other.api.put(`/v1/wallets/${wallet.id}/settings`, { balance_alert: null }), 404, 'not_found')
})

test('invoiced: one alert and one top-up invoice per crossing, an unpaid top-up blocks the next, payment credits exactly and re-arms', async () => {
  const { t, customer, wallet } = await setup({ balance_alert: { threshold: '20' }, auto_topup: { enabled: true, amount: '100', mode: 'invoiced' } })
  await topUp(t.api, wallet.id, '50')
  await debit(t.api, wallet.id, '20') // 30: above the threshold
  assert.deepEqual(await alerts(wallet.id), [])

  const crossing = await debit(t.api, wallet.id, '15') // 15 < 20
  assert.equal(crossing.wallet.balance, '15')
  assert.deepEqual(crossing.wallet.balance_alert, { threshold: '20', state: 'alerted' })
  assert.deepEqual(await alerts(wallet.id), [['debit', '15', '20']])
  const [first, ...none] = await topUpInvoices(wallet.id)
  assert.deepEqual(none, [])
  assert.deepEqual(
    [first.invoice_type, first.invoice_status, first.payment_status, first.total, first.amount_due, first.invoice_number],
    ['ONE_OFF', 'FINALIZED', 'PENDING', '50.00', '50.00', 'INV-000001'],
  )
  assert.deepEqual(first.metadata, { wallet_id: wallet.id, credits: '100', auto_topup_mode: 'invoiced' })
  assert.deepEqual(await alertTopUps(wallet.id), [{ outcome: 'created', invoice_id: first.id, invoice_status: 'FINALIZED', credited: false }])
  const inv = (await t.api.get(`/v1/invoices/${first.id}`)).body
  assert.equal(inv.customer_id, customer.id)
  assert.deepEqual(inv.line_items.map((l: any) => [l.display_name, l.quantity, l.amount]), [['Wallet top-up: 100 credits', '100', '50.00']])
  // Nothing is credited before payment.
  assert.equal((await t.api.get(`/v1/wallets/${wallet.id}`)).body.balance, '15')

  // Still below: no second alert, no second invoice.
  await debit(t.api, wallet.id, '5') // 10
  assert.equal((await alerts(wallet.id)).length, 1)
  assert.equal((await topUpInvoices(wallet.id)).length, 1)

  // A free credit lifts the balance to the threshold: re-armed silently; the next crossing alerts
  // again, but the unpaid top-up invoice blocks a second one.
  const lifted = await topUp(t.api, wallet.id, '10') // 20
  assert.deepEqual(lifted.wallet.balance_alert, { threshold: '20', state: 'armed' })
  await debit(t.api, wallet.id, '1') // 19
  assert.deepEqual(await alerts(wallet.id), [['debit', '15', '20'], ['debit', '19', '20']])
  assert.equal((await topUpInvoices(wallet.id)).length, 1)
  assert.deepEqual((await alertTopUps(wallet.id))[1], { outcome: 'blocked', pending_invoice_id: first.id })

  // Paying it credits exactly 100 PURCHASED credits (50.00 USD) and re-arms the alert (119 >= 20).
  const paid = await t.api.post(`/v1/invoices/${first.id}/payments`, { amount: '50.00' })
  assert.equal(paid.status, 201, JSON.stringify(paid.body))
  assert.equal(paid.body.invoice.payment_status, 'SUCCEEDED')
  const w = (await t.api.get(`/v1/wallets/${wallet.id}`)).body
  assert.deepEqual([w.balance, w.currency_balance, w.balance_alert.state], ['119', '59.50', 'armed'])
  const credits = await sql(`SELECT transaction_reason, credit_amount::text, amount::text, idempotency_key FROM wallet_transactions WHERE wallet_id = ? AND idempotency_key LIKE 'auto_topup:%'`, [wallet.id])
  assert.deepEqual(credits, [{ transaction_reason: 'PURCHASED', credit_amount: '100', amount: '50', idempotency_key: `auto_topup:${first.id}` }])
  assert.equal((await alerts(wallet.id)).length, 2)

  // The next crossing creates the next top-up (the first is paid).
  await debit(t.api, wallet.id, '104') // 15
  assert.equal((await alerts(wallet.id)).length, 3)
  const invoices = await topUpInvoices(wallet.id)
  assert.deepEqual(invoices.map((i) => [i.invoice_status, i.payment_status, i.total]), [['FINALIZED', 'SUCCEEDED', '50.00'], ['FINALIZED', 'PENDING', '50.00']])

  // Raised threshold (re-armed by the change), then the payment leaves the balance still below it:
  // the alert is published again at once and, the paid invoice no longer blocking, a new top-up fires.
  await created(t.api.post(`/v1/wallets/${wallet.id}/debit`, { credits: '15', idempotency_key: 'zero' })) // 0; alerted already: nothing
  assert.equal((await alerts(wallet.id)).length, 3)
  assert.equal((await t.api.put(`/v1/wallets/${wallet.id}/settings`, { balance_alert: { threshold: '150' } })).status, 200)
  await t.api.post(`/v1/invoices/${invoices[1].id}/payments`, { amount: '50.00' })
  const after = (await t.api.get(`/v1/wallets/${wallet.id}`)).body
  assert.deepEqual([after.balance, after.balance_alert.state], ['100', 'alerted'])
  assert.deepEqual((await alerts(wallet.id)).at(-1), ['payment', '100', '150'])
  assert.deepEqual((await topUpInvoices(wallet.id)).map((i) => [i.invoice_status, i.payment_status]), [
    ['FINALIZED', 'SUCCEEDED'], ['FINALIZED', 'SUCCEEDED'], ['FINALIZED', 'PENDING'],
  ])
})

test('instant: the crossing debit credits the top-up at once; paying its invoice credits nothing more', async () => {
  const { t, wallet } = await setup({ balance_alert: { threshold: '10' }, auto_topup: { enabled: true, amount: '25', mode: 'instant' } })
  await topUp(t.api, wallet.id, '12')
  const res = await debit(t.api, wallet.id, '5') // 7 < 10 -> +25 = 32
  assert.deepEqual([res.transaction.credit_amount, res.wallet.balance, res.wallet.balance_alert.state], ['5', '32', 'armed'])
  assert.deepEqual(await alerts(wallet.id), [['debit', '7', '10']])
  const [inv] = await topUpInvoices(wallet.id)
  assert.deepEqual([inv.invoice_status, inv.payment_status, inv.total], ['FINALIZED', 'PENDING', '12.50'])
  // Unpaid instant top-ups do not block: another crossing tops up again.
  await debit(t.api, wallet.id, '23') // 9 -> 34
  assert.equal((await topUpInvoices(wallet.id)).length, 2)
  assert.equal((await t.api.get(`/v1/wallets/${wallet.id}`)).body.balance, '34')
  assert.equal((await t.api.post(`/v1/invoices/${inv.id}/payments`, { amount: '12.50' })).status, 201)
  assert.equal((await t.api.get(`/v1/wallets/${wallet.id}`)).body.balance, '34')
  const rows = await sql(`SELECT count(*)::int AS n FROM wallet_transactions WHERE wallet_id = ? AND transaction_reason = 'PURCHASED'`, [wallet.id])
  assert.equal(rows[0].n, 2)
})

test('concurrent debits across the threshold publish one alert and create one top-up invoice', async () => {
  const { t, wallet } = await setup({ balance_alert: { threshold: '50' }, auto_topup: { enabled: true, amount: '40', mode: 'invoiced' } })
  await topUp(t.api, wallet.id, '100')
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => t.api.post(`/v1/wallets/${wallet.id}/debit`, { credits: '10', idempotency_key: `c-${i}` })))
  assert.deepEqual(results.map((r) => r.status), Array(10).fill(201))
  assert.equal((await t.api.get(`/v1/wallets/${wallet.id}`)).body.balance, '0')
  assert.deepEqual(await alerts(wallet.id), [['debit', '40', '50']])
  assert.deepEqual((await topUpInvoices(wallet.id)).map((i) => [i.invoice_status, i.total]), [['FINALIZED', '20.00']])
})

test('a debit by invoice finalization (prepaid credits) fires the top-up, which is finalized in the same transaction', async () => {
  const t = await p.newTenant()
  const { customer, invoiceIds: [first] } = await billedInvoices(p, t)
  const wallet = await created(t.api.post('/v1/wallets', {
    customer_id: customer.id, currency: 'USD', conversion_rate: '0.5',
    balance_alert: { threshold: '60' }, auto_topup: { enabled: true, amount: '40', mode: 'invoiced' },
  }), 200)
  await topUp(t.api, wallet.id, '100', 'PURCHASED') // 50.00 USD
  const fin = await t.api.post(`/v1/invoices/${first}/finalize`, {})
  assert.equal(fin.status, 200, JSON.stringify(fin.body))
  assert.deepEqual([fin.body.total, fin.body.total_prepaid_credits_applied, fin.body.amount_due], ['25.00', '25.00', '0.00'])
  assert.equal((await t.api.get(`/v1/wallets/${wallet.id}`)).body.balance, '50')
  assert.deepEqual(await alerts(wallet.id), [['debit', '50', '60']])
  const [topup, ...rest] = await topUpInvoices(wallet.id)
  assert.deepEqual(rest, [])
  // Not paid from the wallet it tops up.
  assert.deepEqual([topup.invoice_status, topup.payment_status, topup.total, topup.amount_due], ['FINALIZED', 'PENDING', '20.00', '20.00'])
})

test('a top-up that cannot be created (customer archived) leaves the debit and reports the failure in the alert', async () => {
  const { t, customer, wallet } = await setup({ balance_alert: { threshold: '20' }, auto_topup: { enabled: true, amount: '100', mode: 'instant' } })
  await topUp(t.api, wallet.id, '30')
  await sql(`UPDATE customers SET status = 'archived' WHERE id = ?`, [customer.id])
  const res = await debit(t.api, wallet.id, '15')
  assert.deepEqual([res.wallet.balance, res.wallet.balance_alert.state], ['15', 'alerted'])
  assert.deepEqual(await alerts(wallet.id), [['debit', '15', '20']])
  const [report] = await alertTopUps(wallet.id)
  assert.equal(report.outcome, 'failed')
  assert.match(report.error, /^validation_error: customer_id: customer .* is archived/)
  assert.deepEqual(await topUpInvoices(wallet.id), [])
  assert.equal((await sql(`SELECT count(*)::int AS n FROM invoice_line_items WHERE tenant_id = ?`, [t.tenantId]))[0].n, 0)
})
