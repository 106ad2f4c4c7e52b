// Commitments (issues #4, #5): line item and subscription commitments priced on the cycle
// invoice from usage ingested through Kafka -> ClickHouse, commitment_info on the invoice lines,
// and the refusals of commitment settings (time buckets, factors, true-up) that write nothing.
// Plan used throughout (USD, monthly, ARREAR): platform 10.00 FIXED, API 0.10 per call (meter
// api: SUM of n), storage 2.00 per GB (meter storage: SUM of gb).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { eventually, usePlatform, sqlOn } from '../../test/support/platform.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { billDueSubscriptions } from '../billing/bill-due.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })

const sql = sqlOn(p)

async function setup() {
  const t = await p.newTenant()
  const api = await created(t.api.post('/v1/meters', { name: 'api', event_name: 'api', aggregation: { type: 'SUM', field: 'n' } }))
  const storage = await created(t.api.post('/v1/meters', { name: 'storage', event_name: 'storage', aggregation: { type: 'SUM', field: 'gb' } }))
  const usd = { currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Pro',
    prices: [
      { ...usd, type: 'FIXED', billing_model: 'FLAT_FEE', amount: '10', display_name: 'Platform' },
      { ...usd, type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.1', meter_id: api.id, display_name: 'API' },
      { ...usd, type: 'USAGE', billing_model: 'FLAT_FEE', amount: '2', meter_id: storage.id, display_name: 'Storage' },
    ],
  }))
  const priceId = (name: string) => plan.prices.find((x: any) => x.display_name === name).id as string
  return { t, api, storage, plan, priceId }
}

const bucket = (sh: number, sm: number, eh: number, em: number) => ({ start: { hour: sh, minute: sm }, end: { hour: eh, minute: em } })

async function cycleInvoice(t: { api: any }, subscriptionId: string) {
  const [row] = await sql(`SELECT id FROM invoices WHERE subscription_id = ? AND billing_reason = 'SUBSCRIPTION_CYCLE'`, [subscriptionId])
  const res = await t.api.get(`/v1/invoices/${row.id}`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const byName = Object.fromEntries(res.body.line_items.map((l: any) => [l.display_name, l]))
  return { invoice: res.body, byName }
}

test('line commitments: amount with overage, windowed quantity with time buckets and true-up', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, api, storage, plan, priceId } = await setup()
  await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const created_ = await created(t.api.post('/v1/subscriptions', {
    external_customer_id: 'acme', plan_id: plan.id, currency: 'USD', start_date: '2026-10-01T00:00:00Z',
    override_line_items: [
      { price_id: priceId('API'), commitment_amount: '50', commitment_overage_factor: '1.5' },
      {
        price_id: priceId('Storage'), commitment_quantity: '3', commitment_overage_factor: '2', commitment_true_up_enabled: true,
        commitment_windowed: true, commitment_time_buckets: [bucket(12, 0, 24, 0), bucket(0, 0, 12, 0)],
      },
    ],
  }))
  const lineOf = (name: string) => created_.line_items.find((li: any) => li.price_id === priceId(name))
  assert.deepEqual(
    ['commitment_amount', 'commitment_quantity', 'commitment_overage_factor', 'commitment_true_up_enabled', 'commitment_windowed', 'commitment_time_buckets'].map((k) => lineOf('API')[k]),
    ['50', null, '1.5', false, false, null],
  )
  assert.deepEqual(lineOf('Storage').commitment_time_buckets, [bucket(12, 0, 24, 0), bucket(0, 0, 12, 0)])
  assert.equal(lineOf('Storage').commitment_quantity, '3')
  assert.equal(lineOf('Platform').commitment_amount, null)
  // the GET reads back the same settings
  const read = (await t.api.get(`/v1/subscriptions/${created_.id}`)).body
  assert.deepEqual(read.line_items.find((li: any) => li.price_id === priceId('Storage')).commitment_time_buckets, [bucket(12, 0, 24, 0), bucket(0, 0, 12, 0)])

  const ev = (id: string, name: string, ts: string, properties: object) => ({ event_id: id, event_name: name, external_customer_id: 'acme', timestamp: ts, properties })
  await ingestAll(t.api, [
    ev('a1', 'api', '2026-10-03T10:00:00Z', { n: 600 }), ev('a2', 'api', '2026-10-20T10:00:00Z', { n: 20 }), // 620 calls
    ev('a3', 'api', '2026-11-02T10:00:00Z', { n: 999 }), // November: not in October's invoice
    ev('s1', 'storage', '2026-10-02T11:59:59Z', { gb: 5 }), // Oct 2, bucket 00:00-12:00
    ev('s2', 'storage', '2026-10-02T12:00:00Z', { gb: 1 }), // Oct 2, bucket 12:00-24:00
    ev('s3', 'storage', '2026-10-02T23:30:00Z', { gb: '1.5' }), // same bucket
  ])
  await eventually(async () => ((await usage(t.api, api.id, { external_customer_id: 'acme' })).value === '1619' ? true : undefined), 'api usage in ClickHouse')
  await eventually(async () => ((await usage(t.api, storage.id, { external_customer_id: 'acme' })).value === '7.5' ? true : undefined), 'storage usage in ClickHouse')

  clock.set(new Date('2026-11-01T00:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  const { invoice, byName } = await cycleInvoice(t, created_.id)
  // API: 620 x 0.10 = 62.00 against 50.00: 50.00 utilized + (62 - 50) x 1.5 = 18.00 overage = 68.00
  assert.equal(byName.API.quantity, '620')
  assert.equal(byName.API.amount, '68.00')
  assert.deepEqual(byName.API.commitment_info, {
    amount: '50.00', quantity: null, overage_factor: '1.5', computed_commitment_utilized_amount: '50.00',
    computed_overage_amount: '18.00', computed_true_up_amount: '0.00', is_windowed: false, true_up_enabled: false,
  })
  // Storage: 3 GB x 2.00 = 6.00 per window, 31 days x 2 buckets = 62 windows.
  // Oct 2 00-12: 5 GB = 10.00 -> 6.00 utilized + (10 - 6) x 2 = 8.00 overage
  // Oct 2 12-24: 2.5 GB = 5.00 -> 5.00 utilized + 1.00 true-up
  // 60 windows without usage: 60 x 6.00 = 360.00 true-up
  // utilized 11.00 + overage 8.00 + true-up 361.00 = 380.00
  assert.equal(byName.Storage.quantity, '7.5')
  assert.equal(byName.Storage.amount, '380.00')
  assert.deepEqual(byName.Storage.commitment_info, {
    amount: '6.00', quantity: '3', overage_factor: '2', computed_commitment_utilized_amount: '11.00',
    computed_overage_amount: '8.00', computed_true_up_amount: '361.00', is_windowed: true, true_up_enabled: true,
  })
  assert.equal(byName.Platform.amount, '10.00')
  assert.equal(byName.Platform.commitment_info, null)
  // 10.00 + 68.00 + 380.00
  assert.equal(invoice.subtotal, '458.00')
  const stored = await sql(`SELECT commitment_info FROM invoice_line_items WHERE invoice_id = ? AND display_name = 'API'`, [invoice.id])
  assert.equal(stored[0].commitment_info.computed_overage_amount, '18.00')
})

test('subscription commitment: shared by the usage lines in line order, true-up on the first', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, api, storage, plan } = await setup()
  await created(t.api.post('/v1/customers', { external_id: 'beta' }))
  const sub = await created(t.api.post('/v1/subscriptions', {
    external_customer_id: 'beta', plan_id: plan.id, currency: 'USD', start_date: '2026-10-01T00:00:00Z',
    commitment_amount: '100', overage_factor: '1.2', enable_true_up: true,
  }))
  assert.deepEqual([sub.commitment_amount, sub.overage_factor, sub.enable_true_up], ['100', '1.2', true])
  const ev = (id: string, name: string, properties: object) => ({ event_id: id, event_name: name, external_customer_id: 'beta', timestamp: '2026-10-10T00:00:00Z', properties })
  await ingestAll(t.api, [ev('b1', 'api', { n: 300 }), ev('b2', 'storage', { gb: 10 })])
  await eventually(async () => ((await usage(t.api, api.id, { external_customer_id: 'beta' })).value === '300' ? true : undefined), 'api usage')
  await eventually(async () => ((await usage(t.api, storage.id, { external_customer_id: 'beta' })).value === '10' ? true : undefined), 'storage usage')

  clock.set(new Date('2026-11-01T00:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  const { invoice, byName } = await cycleInvoice(t, sub.id)
  // Usage 30.00 (API) + 20.00 (Storage) = 50.00 of 100.00: 50.00 true-up on the first usage line
  // (line items in created_at, id order); the FIXED Platform line takes no part.
  const order = await sql(`SELECT li.display_name FROM subscription_line_items li JOIN prices p ON p.id = li.price_id
    WHERE li.subscription_id = ? AND p.type = 'USAGE' ORDER BY li.created_at, li.id`, [sub.id])
  const [first, second] = order.map((r: any) => r.display_name as string)
  const usageOf: Record<string, string> = { API: '30.00', Storage: '20.00' }
  const info = (utilized: string, trueUp: string) => ({
    amount: '100.00', quantity: null, overage_factor: '1.2', computed_commitment_utilized_amount: utilized,
    computed_overage_amount: '0.00', computed_true_up_amount: trueUp, is_windowed: false, true_up_enabled: true,
  })
  assert.deepEqual(byName[first].commitment_info, info(usageOf[first], '50.00'))
  assert.equal(byName[first].amount, first === 'API' ? '80.00' : '70.00')
  assert.deepEqual(byName[second].commitment_info, info(usageOf[second], '0.00'))
  assert.equal(byName[second].amount, usageOf[second])
  assert.equal(byName.Platform.commitment_info, null)
  // 10.00 + 30.00 + 20.00 + 50.00 true-up
  assert.equal(invoice.subtotal, '110.00')
})

test('refused commitment settings: 400 validation_error naming the field, nothing written', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, plan, priceId } = await setup()
  await created(t.api.post('/v1/customers', { external_id: 'gamma' }))
  const before = [await countRows(p, 'subscriptions', t.tenantId), await countRows(p, 'subscription_line_items', t.tenantId)]
  const subscribe = (extra: object) => t.api.post('/v1/subscriptions', { external_customer_id: 'gamma', plan_id: plan.id, currency: 'USD', ...extra })
  const storageLine = (extra: object) => ({
    override_line_items: [{ price_id: priceId('Storage'), commitment_amount: '10', commitment_windowed: true, ...extra }],
  })
  const refusals: [object, RegExp][] = [
    [storageLine({ commitment_time_buckets: [bucket(0, 0, 12, 0), bucket(10, 0, 24, 0)] }),
      /override_line_items\[0\]\.commitment_time_buckets\[1\]: bucket 10:00-24:00 overlaps commitment_time_buckets\[0\] \(00:00-12:00\)/],
    [storageLine({ commitment_time_buckets: [bucket(0, 0, 12, 0), bucket(13, 0, 24, 0)] }),
      /override_line_items\[0\]\.commitment_time_buckets\[1\]: the buckets leave 12:00-13:00 uncovered/],
    [storageLine({ commitment_time_buckets: [bucket(0, 0, 20, 0)] }), /commitment_time_buckets\[0\]: the buckets leave 20:00-24:00 uncovered/],
    [storageLine({ commitment_time_buckets: [bucket(0, 0, 9, 30), bucket(9, 30, 24, 0)] }),
      /commitment_time_buckets\[0\]: end 09:30 is not on the hour; the meter's buckets are hours/],
    [storageLine({ commitment_time_buckets: [bucket(0, 0, 24, 0)], commitment_windowed: false }), /commitment_time_buckets need commitment_windowed true/],
    [{ override_line_items: [{ price_id: priceId('Platform'), commitment_amount: '5' }] }, /commitments apply to USAGE prices only/],
    [{ override_line_items: [{ price_id: priceId('API'), commitment_amount: '5', commitment_quantity: '5' }] }, /not both/],
    [{ override_line_items: [{ price_id: priceId('API'), commitment_amount: '5', commitment_overage_factor: '0.5' }] }, /commitment_overage_factor must be 1 or more/],
    [{ override_line_items: [{ price_id: priceId('API'), commitment_true_up_enabled: true }] }, /commitment_true_up_enabled needs commitment_amount or commitment_quantity/],
    [{ override_line_items: [{ price_id: 'price_unknown', commitment_amount: '5' }] }, /price price_unknown is not a price this subscription takes/],
    [{ commitment_amount: '100', overage_factor: '0.9' }, /overage_factor must be 1 or more/],
    [{ enable_true_up: true }, /enable_true_up needs a commitment_amount/],
    [{ overage_factor: '1.5' }, /overage_factor needs a commitment_amount/],
  ]
  for (const [body, message] of refusals) assertError(await subscribe(body), 400, 'validation_error', message)
  // a negative commitment never passes the schema
  assertError(await subscribe({ commitment_amount: '-1' }), 400, 'validation_error')
  assert.deepEqual([await countRows(p, 'subscriptions', t.tenantId), await countRows(p, 'subscription_line_items', t.tenantId)], before)
  // the same settings, corrected, are accepted
  const sub = await created(subscribe(storageLine({ commitment_time_buckets: [bucket(0, 0, 12, 0), bucket(12, 0, 24, 0)] })))
  const storage = sub.line_items.find((li: any) => li.price_id === priceId('Storage'))

  // update: a refused change leaves the line item and the subscription's version as they were
  const put = (body: object) => t.api.put(`/v1/subscriptions/${sub.id}/line_items/${storage.id}/commitment`, body)
  assertError(await put({ commitment_amount: '10', commitment_windowed: true, commitment_time_buckets: [bucket(0, 0, 12, 0), bucket(11, 0, 24, 0)] }),
    400, 'validation_error', /body\.commitment_time_buckets\[1\]: bucket 11:00-24:00 overlaps commitment_time_buckets\[0\]/)
  assertError(await put({ commitment_amount: '10', version: sub.version + 1 }), 409, 'version_conflict')
  assertError(await t.api.put(`/v1/subscriptions/${sub.id}/line_items/subs_line_unknown/commitment`, { commitment_amount: '1' }), 404, 'not_found')
  const unchanged = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body
  assert.equal(unchanged.version, sub.version)
  assert.deepEqual(unchanged.line_items.find((li: any) => li.id === storage.id), storage)
  // a valid change replaces the whole commitment (omitted settings are cleared) and bumps the version
  const res = await put({ commitment_quantity: '4', commitment_true_up_enabled: true, version: sub.version })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.version, sub.version + 1)
  const li = res.body.line_items.find((x: any) => x.id === storage.id)
  assert.deepEqual(
    [li.commitment_amount, li.commitment_quantity, li.commitment_overage_factor, li.commitment_true_up_enabled, li.commitment_windowed, li.commitment_time_buckets],
    [null, '4', '1', true, false, null],
  )
})
