// The credit expiry job: two concurrent runs (each with its own Postgres pool) expire every
// due credit exactly once; the ledger still balances and a repeated run does nothing.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { created } from '../../test/support/fixtures.js'
import { usePlatform } from '../../test/support/platform.js'
import { D } from '../pricing/index.js'
import { expireWalletCredits } from './expire-credits.js'
import { JOBS } from '../../scheduler/jobs.js'
import { withSecondProcess } from '../../test/support/second-process.js'

const clock = new ManualClock(new Date('2026-11-10T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

async function sql(query: string, params: unknown[] = []): Promise<any[]> {
  return p.ctx.orm.em.fork().getConnection().execute(query, params)
}

test('two concurrent expiry runs write one expiry row per expired credit and zero its credits_available', async () => {
  const t = await p.newTenant()
  const wallets: string[] = []
  const expiring: string[] = []
  for (let i = 0; i < 6; i++) {
    const c = await created(t.api.post('/v1/customers', { external_id: `c${i}` }))
    const w = await created(t.api.post('/v1/wallets', { customer_id: c.id, currency: 'USD', conversion_rate: '0.5' }), 200)
    wallets.push(w.id)
    const top = (body: object) => created(t.api.post(`/v1/wallets/${w.id}/top-up`, { transaction_reason: 'PROMOTIONAL', idempotency_key: `k-${Math.random()}`, ...body }), 200)
    expiring.push((await top({ credits: '10', priority: 0, expiry_date: '2026-11-11T00:00:00Z' })).transaction.id)
    expiring.push((await top({ credits: '2.5', expiry_date: '2026-11-12T00:00:00Z' })).transaction.id)
    await top({ credits: '4', expiry_date: '2026-12-01T00:00:00Z' }) // not yet due
    await created(t.api.post(`/v1/wallets/${w.id}/debit`, { credits: '3', idempotency_key: 'spend' })) // takes 3 of the 10
  }
  // Nothing is due yet.
  assert.equal(await expireWalletCredits(p.ctx, { tenantId: t.tenantId }), 0)

  clock.set(new Date('2026-11-12T00:00:00Z')) // both first credits expired (<= now)
  await withSecondProcess(p, async (ctxB) => {
    const only = { tenantId: t.tenantId, batchSize: 2 }
    const [a, b] = await Promise.all([expireWalletCredits(p.ctx, only), expireWalletCredits(ctxB, only)])
    assert.equal(a + b, 12, `runs expired ${a} + ${b}`)
  })
  const rows = await sql(
    `SELECT metadata->>'expired_credit_tx_id' AS credit, credit_amount::text AS credits, amount::text AS amount, idempotency_key
       FROM wallet_transactions WHERE type = 'expiry' AND wallet_id IN (?) ORDER BY 1`, [wallets])
  assert.equal(rows.length, 12)
  assert.deepEqual(rows.map((r) => r.credit), [...expiring].sort())
  for (const r of rows) {
    assert.equal(r.idempotency_key, `expiry:${r.credit}`)
    // 10 - 3 debited = 7 left (3.50 USD), or the untouched 2.5 (1.25 USD)
    assert.ok((r.credits === '7' && r.amount === '3.5') || (r.credits === '2.5' && r.amount === '1.25'), JSON.stringify(r))
  }
  const left = await sql(`SELECT count(*)::int AS n FROM wallet_transactions WHERE id IN (?) AND credits_available <> 0`, [expiring])
  assert.equal(left[0].n, 0)

  for (const id of wallets) {
    const w = (await t.api.get(`/v1/wallets/${id}`)).body
    assert.deepEqual([w.balance, w.currency_balance], ['4', '2.00'])
    const [sums] = await sql(
      `SELECT coalesce(sum(credit_amount) FILTER (WHERE type = 'credit'), 0) - coalesce(sum(credit_amount) FILTER (WHERE type IN ('debit', 'expiry')), 0) AS net
         FROM wallet_transactions WHERE wallet_id = ?`, [id])
    // 16.5 credited - 3 debited - 9.5 expired = 4
    assert.equal(new D(sums.net).toString(), w.balance)
  }
  const [events] = await sql(`SELECT count(*)::int AS n FROM system_events_outbox WHERE event_name = 'wallet.transaction_created' AND payload->>'type' = 'expiry' AND tenant_id = ?`, [t.tenantId])
  assert.equal(events.n, 12)
  // A second run (same tick, or later) expires nothing again.
  assert.equal(await expireWalletCredits(p.ctx, { tenantId: t.tenantId }), 0)
  clock.set(new Date('2026-11-20T00:00:00Z'))
  assert.equal(await JOBS['wallet-credit-expiry'].run(p.ctx, { tenant_id: t.tenantId }), 0)
  assert.equal(JOBS['wallet-credit-expiry'].everyMs(p.ctx), 15 * 60_000)
})
