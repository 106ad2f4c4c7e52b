// Postgres stopped under the running platform (issue #13, item 4): calls that need it answer
// 503 service_unavailable within 2 s, ingest keeps accepting with keys it has seen, the
// aggregator keeps writing usage with the meters it knows, nothing is half-written, and
// everything recovers by itself when Postgres is back. A private Postgres (pg_ctl on a free
// port) so other test files keep theirs.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { assertError } from '../support/assertions.js'
import { created, ingestAll, usage } from '../support/fixtures.js'
import { eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-services.js'

let pg: PrivatePostgres
let p: TestPlatform
before(async () => {
  pg = await startPrivatePostgres()
  // A short key cache: ingest during the outage must rely on the last known answer, not a fresh cache.
  p = await startTestPlatform({ migrate: true, config: { databaseUrl: pg.url, apiKeyCacheTtlMs: 100 } })
})
after(async () => {
  await p?.stop()
  pg?.destroy()
})

const events = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ event_id: `${prefix}-${i}`, event_name: 'call', external_customer_id: 'acme', properties: { n: '1.5' } }))

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now()
  const result = await work()
  return [result, Date.now() - started]
}

async function meterEventCount(tenantId: string): Promise<number> {
  const [row] = await p.ctx.ch.query<{ n: string }>(
    `SELECT count() AS n FROM (SELECT event_id FROM ${p.ctx.ch.table('meter_events')} WHERE tenant_id = {t:String} LIMIT 1 BY event_id)`,
    { t: tenantId },
  )
  return Number(row.n)
}

test('Postgres down: 503 within 2 s, ingest and aggregation go on, recovery by itself, exact usage', async () => {
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'SUM', field: 'n' } }))
  await ingestAll(t.api, events('before', 200))
  await eventually(async () => ((await usage(t.api, meter.id, { external_customer_id: 'acme' })).value === '300' ? true : undefined), 'usage before the outage')
  const plans = (await t.api.get('/v1/plans')).body.pagination.total

  pg.stop()
  const stoppedAt = Date.now()
  const calls: [string, () => Promise<{ status: number; body: any }>][] = [
    ['GET /v1/customers', () => t.api.get('/v1/customers')],
    ['POST /v1/customers', () => t.api.post('/v1/customers', { external_id: 'during-outage' })],
    ['POST /v1/plans', () => t.api.post('/v1/plans', { name: 'p', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '1', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] })],
    ['POST /v1/meters/{id}/usage', () => t.api.post(`/v1/meters/${meter.id}/usage`, { external_customer_id: 'acme', start_time: '2000-01-01T00:00:00Z', end_time: '2100-01-01T00:00:00Z' })],
    ['GET /v1/meters/{id}', () => t.api.get(`/v1/meters/${meter.id}`)],
  ]
  const times: Record<string, number> = {}
  for (const [name, call] of calls) {
    const [res, ms] = await timed(call)
    assertError(res, 503, 'service_unavailable', /database is unavailable/)
    assert.ok(ms < 2000, `${name} answered 503 in ${ms} ms`)
    times[name] = ms
  }

  // Ingest keeps accepting (the key was seen before the outage); the aggregator writes usage.
  const [, ingestMs] = await timed(() => ingestAll(t.api, events('during', 300)))
  await eventually(async () => ((await meterEventCount(t.tenantId)) === 500 ? true : undefined), 'the aggregator to write the events sent during the outage')
  const aggregatedAfter = Date.now() - stoppedAt

  pg.start()
  const restartedAt = Date.now()
  await eventually(async () => ((await t.api.get('/v1/customers')).status === 200 ? true : undefined), 'the API to answer again', 15_000)
  const recoveryMs = Date.now() - restartedAt

  assert.equal((await usage(t.api, meter.id, { external_customer_id: 'acme' })).value, '750', 'every event counted once: 500 x 1.5')
  assert.equal((await t.api.get('/v1/plans')).body.pagination.total, plans, 'no plan half-written by the refused request')
  assert.equal((await t.api.get('/v1/customers?external_id=during-outage')).body.pagination.total, 0)
  assert.equal((await t.api.post('/v1/customers', { external_id: 'after-outage' })).status, 201)
  console.log(`# postgres-down figures: time to 503 per call (ms) ${JSON.stringify(times)}; 300 events ingested during the outage in ${ingestMs} ms, counted ${aggregatedAfter} ms after the stop; API answering ${recoveryMs} ms after pg_ctl start`)
})
