// The billing schedule under concurrency: two scheduler processes (each with its own
// Postgres pool) billing the same due subscriptions create every invoice exactly once.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { billDueSubscriptions } from './bill-due.js'
import { withSecondProcess } from '../../test/support/second-process.js'

const clock = new ManualClock(new Date('2026-09-15T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

test('two concurrent billing runs bill each due period exactly once, catching up missed periods', async () => {
  const t = await p.newTenant()
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Seat',
    prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '5', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }],
  }))
  const subs: string[] = []
  for (let i = 0; i < 12; i++) {
    const c = await created(t.api.post('/v1/customers', { external_id: `c${i}` }))
    subs.push((await created(t.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id, currency: 'EUR', start_date: '2026-07-01T00:00:00Z' }))).id)
  }
  // Two full periods have ended (July and August) when the runs start.
  await withSecondProcess(p, async (ctxB) => {
    const only = { tenantId: t.tenantId, batchSize: 5 }
    const [a, b] = await Promise.all([billDueSubscriptions(p.ctx, only), billDueSubscriptions(ctxB, only)])
    assert.equal(a.invoices + b.invoices, 24, `runs billed ${a.invoices} + ${b.invoices}`)
  })
  const rows = await p.ctx.orm.em.fork().getConnection().execute(
    `SELECT subscription_id, to_char(period_start AT TIME ZONE 'UTC', 'YYYY-MM') AS month, total::text AS total
       FROM invoices WHERE subscription_id IN (?) ORDER BY subscription_id, period_start`,
    [subs],
  )
  assert.equal(rows.length, 24)
  for (const id of subs) {
    const mine = rows.filter((r: any) => r.subscription_id === id)
    assert.deepEqual(mine.map((r: any) => [r.month, r.total]), [['2026-07', '5.00'], ['2026-08', '5.00']])
  }
  const sub = (await t.api.get(`/v1/subscriptions/${subs[0]}`)).body
  assert.equal(sub.current_period_start, '2026-09-01T00:00:00.000Z')
  // Running again for the same tick bills nothing.
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 })
  clock.set(new Date('2026-10-01T00:00:00Z'))
  assert.equal((await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })).invoices, 12)
})
