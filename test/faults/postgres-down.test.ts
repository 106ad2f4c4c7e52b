// Postgres stopped under the running platform (issue #13, item 4): calls that need it answer
// 503 service_unavailable within 2 s, ingest keeps accepting with keys it has seen, the
// aggregator holds its writes (the shard fence lives in Postgres: no write without it) and
// counts everything once Postgres is back, nothing is half-written, and everything recovers by
// itself. A private Postgres (pg_ctl on a free
// port) so other test files keep theirs.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Socket } from 'node:net'
import { openOrm } from '../../billing-api/database.js'
import { toErrorResponse } from '../../platform/http.js'
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
    `SELECT count() AS n FROM (SELECT event_id, timestamp FROM ${p.ctx.ch.table('meter_events')} WHERE tenant_id = {t:String} LIMIT 1 BY event_id, timestamp)`,
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

  // Load through the whole outage: batches of 50 unique events, sent back to back.
  const load = { sent: 0, acknowledged: 0, refused: 0, running: true }
  const loader = (async () => {
    for (let batch = 0; load.running; batch++) {
      const res = await t.api.post('/v1/events/raw/bulk', { events: events(`load-${batch}`, 50) })
      load.sent += 50
      if (res.status === 202) load.acknowledged += 50
      else load.refused += 50
    }
  })()

  pg.stop()
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

  // Ingest keeps accepting (the key was seen before the outage). The aggregator cannot hold its
  // shards' fence without Postgres: the events wait in the spool and Kafka meanwhile.
  const [, ingestMs] = await timed(() => ingestAll(t.api, events('during', 300)))
  const writtenDuringOutage = await meterEventCount(t.tenantId)

  pg.start()
  const restartedAt = Date.now()
  await eventually(async () => ((await t.api.get('/v1/customers')).status === 200 ? true : undefined), 'the API to answer again', 15_000)
  const recoveryMs = Date.now() - restartedAt

  load.running = false
  await loader
  assert.equal(load.refused, 0, 'ingest accepted every batch during the outage')
  const expected = 500 + load.acknowledged
  await eventually(async () => ((await meterEventCount(t.tenantId)) === expected ? true : undefined), 'every acknowledged event to be written')
  const aggregatedAfter = Date.now() - restartedAt
  assert.equal((await usage(t.api, meter.id, { external_customer_id: 'acme' })).value, String(expected * 1.5), 'every acknowledged event counted once, x 1.5')
  assert.equal((await t.api.get('/v1/plans')).body.pagination.total, plans, 'no plan half-written by the refused request')
  assert.equal((await t.api.get('/v1/customers?external_id=during-outage')).body.pagination.total, 0)
  assert.equal((await t.api.post('/v1/customers', { external_id: 'after-outage' })).status, 201)
  console.log(`# postgres-down figures: time to 503 per call (ms) ${JSON.stringify(times)}; 300 events ingested during the outage in ${ingestMs} ms (${writtenDuringOutage} events of the tenant written by then), all counted ${aggregatedAfter} ms after pg_ctl start; API answering ${recoveryMs} ms after pg_ctl start; load: ${load.sent} sent, ${load.acknowledged} acknowledged, ${expected} counted (with the 500 of the test)`)
})

test('a Postgres down when a thread opens its ORM without connecting (the aggregator thread): the start succeeds, statements fail 503, and work once it is up', async () => {
  const vacant = createServer()
  await new Promise<void>((r) => vacant.listen(0, '127.0.0.1', () => r()))
  const port = (vacant.address() as { port: number }).port
  await new Promise((r) => vacant.close(r)) // nothing listens there now
  const down = await openOrm(`postgres://meterline:meterline@127.0.0.1:${port}/meterline`, 2, { acquireTimeoutMs: 1500, connectTimeoutMs: 1000 }, undefined, false)
  try {
    const err = await down.em.getConnection().execute('SELECT 1').then(() => undefined, (e: Error) => e)
    assert.ok(err, 'the statement failed')
    assert.deepEqual(toErrorResponse(err), { code: 'service_unavailable', http_status_code: 503, message: 'the database is unavailable; retry later' })
  } finally {
    await down.close().catch(() => undefined)
  }
  // The eager default refuses to start instead.
  await assert.rejects(openOrm(`postgres://meterline:meterline@127.0.0.1:${port}/meterline`, 2, { acquireTimeoutMs: 1500, connectTimeoutMs: 1000 }))
  const up = await openOrm(pg.url, 2, {}, undefined, false)
  try {
    assert.deepEqual(await up.em.getConnection().execute('SELECT 1 AS one'), [{ one: 1 }])
  } finally {
    await up.close()
  }
})

test('a Postgres that accepts connections but never answers: the connection attempt gives up within PG_CONNECT_TIMEOUT_MS, mapped to 503', async () => {
  // A hung server (a frozen host, a dropped route): TCP connects, the startup handshake never completes.
  const sockets: Socket[] = []
  const silent = createServer((s) => sockets.push(s))
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()))
  const port = (silent.address() as { port: number }).port
  let orm: Awaited<ReturnType<typeof openOrm>> | undefined
  try {
    const started = Date.now()
    const err = await (async () => {
      orm = await openOrm(`postgres://meterline:meterline@127.0.0.1:${port}/meterline`, 2, { acquireTimeoutMs: 1500, connectTimeoutMs: 1000 })
      await orm.em.getConnection().execute('SELECT 1')
    })().then(() => undefined, (e: Error) => e)
    const ms = Date.now() - started
    assert.ok(err, 'the query failed')
    assert.deepEqual(toErrorResponse(err), { code: 'service_unavailable', http_status_code: 503, message: 'the database is unavailable; retry later' })
    assert.ok(ms < 2000, `gave up after ${ms} ms`)
    console.log(`# hung-postgres figures: 503 after ${ms} ms`)
  } finally {
    await orm?.close().catch(() => undefined) // the pool never held a connection; closing may report the failed attempts
    for (const s of sockets) s.destroy()
    silent.close()
  }
})
