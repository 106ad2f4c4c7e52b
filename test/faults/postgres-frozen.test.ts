// A Postgres that accepts connections but never answers (issue #24): its postmaster and every
// backend stopped with SIGSTOP, so TCP connects still succeed and nothing is answered. Requests
// that need Postgres answer 503 service_unavailable (no request waits without bound), a raw pg
// pool like the aggregator's fence fails its queries too, nothing is half-written, and after
// SIGCONT everything answers again by itself. A private Postgres (initdb on a free port), so the
// freeze never touches the database other test files use. The time to each 503 is printed, not
// asserted (a shared machine); the watchdog's budget is PG_NO_ANSWER_MS + PG_PROBE_TIMEOUT_MS.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { ShardFence } from '../../aggregator/shard-fence.js'
import { PostgresWatchdog } from '../../platform/postgres-watchdog.js'
import { toErrorResponse } from '../../platform/http.js'
import { openOrm } from '../../billing-api/database.js'
import { assertError } from '../support/assertions.js'
import { created } from '../support/fixtures.js'
import { eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-services.js'

let pg: PrivatePostgres
let p: TestPlatform
before(async () => {
  pg = await startPrivatePostgres()
  p = await startTestPlatform({ migrate: true, services: ['billing-api', 'scheduler'], config: { databaseUrl: pg.url, apiKeyCacheTtlMs: 100 } })
})
after(async () => {
  pg?.thaw()
  await p?.stop()
  pg?.destroy()
})

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now()
  const result = await work()
  return [result, Date.now() - started]
}

test('a live Postgres: a long statement outlives the watchdog (its probe answers); statement_timeout and lock_timeout cancel, mapped to 503', async () => {
  const watchdog = new PostgresWatchdog(pg.url, p.config.postgres)
  const orm = await openOrm(pg.url, 2, { ...p.config.postgres, statementTimeoutMs: 3000, lockTimeoutMs: 300 }, watchdog)
  try {
    // Three times PG_NO_ANSWER_MS without an answer: the watchdog probes, Postgres answers, the statement goes on.
    const [rows] = await orm.em.fork().getConnection().execute(`SELECT 1 AS n FROM pg_sleep(${(3 * p.config.postgres.noAnswerMs) / 1000})`)
    assert.equal(rows.n, 1)
    assert.equal(watchdog.health, 'answering')
    const timedOut = await orm.em.fork().getConnection().execute('SELECT pg_sleep(5)').then(() => undefined, (e: Error) => e)
    assert.match(String(timedOut?.message), /statement timeout/)
    assert.deepEqual(toErrorResponse(timedOut!), { code: 'service_unavailable', http_status_code: 503, message: 'the database is unavailable; retry later' })
    // A row lock held by another transaction: the waiting statement gives up after lock_timeout.
    const t = await p.newTenant()
    const holder = orm.em.fork()
    const blocked = await holder.transactional(async (tx) => {
      await tx.getConnection().execute('SELECT 1 FROM tenants WHERE id = ? FOR UPDATE', [t.tenantId], 'all', tx.getTransactionContext())
      return orm.em.fork().getConnection().execute('UPDATE tenants SET name = name WHERE id = ?', [t.tenantId]).then(() => undefined, (e: Error) => e)
    })
    assert.match(String(blocked?.message), /lock timeout/)
    assert.equal(toErrorResponse(blocked!).code, 'service_unavailable')
  } finally {
    watchdog.stop()
    await orm.close()
  }
})

test('Postgres frozen by SIGSTOP: 503 service_unavailable instead of a hang, raw pools fail too, nothing half-written, recovery after SIGCONT', async () => {
  const t = await p.newTenant()
  const customer = await created(t.api.post('/v1/customers', { external_id: 'before-freeze' }))
  // The platform's own pools hold open connections now: the freeze hits them, not only new connects.
  const watchdog = new PostgresWatchdog(pg.url, p.config.postgres)
  const fencePool = ShardFence.pool(pg.url, 2, p.config.postgres, watchdog)
  await fencePool.query('SELECT 1')

  const times: Record<string, number> = {}
  pg.freeze()
  try {
    const calls: [string, () => Promise<{ status: number; body: any }>][] = [
      ['GET /v1/customers/{id}', () => t.api.get(`/v1/customers/${customer.id}`)],
      ['POST /v1/customers', () => t.api.post('/v1/customers', { external_id: 'during-freeze' })],
      ['GET /v1/customers', () => t.api.get('/v1/customers')],
      ['POST /v1/plans', () => t.api.post('/v1/plans', { name: 'p', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '1', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] })],
    ]
    for (const [name, call] of calls) {
      const [res, ms] = await timed(call)
      assertError(res, 503, 'service_unavailable', /database is unavailable/)
      times[name] = ms
    }
    // Two at once: both fail, neither waits behind the other's hung connection.
    const [both, bothMs] = await timed(() => Promise.all([t.api.get('/v1/customers'), t.api.get(`/v1/customers/${customer.id}`)]))
    for (const res of both) assertError(res, 503, 'service_unavailable')
    times['2 concurrent GETs'] = bothMs

    // A raw pg pool (the aggregator's fence) with its open connection: the query fails, mapped to 503.
    const [err, fenceMs] = await timed(() => fencePool.query('SELECT 1').then(() => undefined, (e: Error) => e))
    assert.ok(err, 'the fence pool query failed instead of hanging')
    assert.equal(toErrorResponse(err).code, 'service_unavailable')
    times['fence pool SELECT 1'] = fenceMs
    // The ORM as background loops (scheduler, outbox relay, billing) use it.
    const [ormErr, ormMs] = await timed(() => p.ctx.orm.em.fork().getConnection().execute('SELECT 1').then(() => undefined, (e: Error) => e))
    assert.ok(ormErr, 'the ORM query failed instead of hanging')
    assert.equal(toErrorResponse(ormErr).code, 'service_unavailable')
    times['ORM SELECT 1'] = ormMs
  } finally {
    pg.thaw()
  }
  const thawedAt = Date.now()
  await eventually(async () => ((await t.api.get('/v1/customers')).status === 200 ? true : undefined), 'the API to answer again', 20_000)
  const recoveryMs = Date.now() - thawedAt

  const listed = (await t.api.get('/v1/customers')).body
  assert.deepEqual(listed.items.map((c: { external_id: string }) => c.external_id), ['before-freeze'], 'the refused POST wrote nothing')
  assert.equal((await t.api.post('/v1/customers', { external_id: 'after-freeze' })).status, 201)
  assert.equal((await t.api.get('/v1/plans')).body.pagination.total, 0, 'no plan half-written')
  await eventually(async () => (await fencePool.query('SELECT 1').then(() => true, () => undefined)), 'the fence pool to answer again')
  watchdog.stop()
  await fencePool.end()
  console.log(`# postgres-frozen figures: time to 503 / failure per call (ms) ${JSON.stringify(times)}; API answering ${recoveryMs} ms after SIGCONT`)
})
