// GET /v1/events: the latest counted events of the key's environment, newest acknowledgement
// first, with filters and paging; another tenant sees none of them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { assertError } from '../../test/support/assertions.js'
import { ingestAll } from '../../test/support/fixtures.js'
import { eventually, usePlatform } from '../../test/support/platform.js'

const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'] })

test('latest events: newest accepted first, properties as sent, filters, paging, tenancy, bounds', async () => {
  const t = await p.newTenant()
  const ev = (id: string, name: string, customer: string, props: object) => ({ event_id: id, event_name: name, external_customer_id: customer, timestamp: '2026-10-03T08:00:00Z', properties: props })
  await ingestAll(t.api, [ev('a1', 'call', 'acme', { tokens: 12, model: 'small' }), ev('a2', 'call', 'beta', { tokens: '1.5' })])
  await eventually(async () => ((await t.api.get('/v1/events')).body.pagination?.total === 2 ? true : undefined), 'the first batch counted')
  await ingestAll(t.api, [ev('b1', 'upload', 'acme', { bytes: 10 })])
  const all = await eventually(async () => {
    // The page and its total are two reads: an insert landing between them shows in one only.
    const res = await t.api.get('/v1/events')
    return res.body.pagination.total === 3 && res.body.items.length === 3 ? res.body : undefined
  }, 'the second batch counted')

  // b1 was accepted after a1 and a2 (which share their request's instant: event_id breaks the tie).
  assert.deepEqual(all.items.map((e: any) => e.event_id), ['b1', 'a2', 'a1'])
  const a1 = all.items[2]
  assert.deepEqual(
    [a1.event_name, a1.external_customer_id, a1.timestamp, a1.properties, a1.source],
    ['call', 'acme', '2026-10-03T08:00:00.000Z', { tokens: 12, model: 'small' }, ''],
  )
  assert.ok(Date.parse(all.items[0].ingested_at) >= Date.parse(a1.ingested_at))
  assert.deepEqual(all.pagination, { limit: 50, offset: 0, total: 3 })

  const calls = (await t.api.get('/v1/events?event_name=call')).body
  assert.deepEqual([calls.items.map((e: any) => e.event_id), calls.pagination.total], [['a2', 'a1'], 2])
  const acme = (await t.api.get('/v1/events?external_customer_id=acme&limit=1&offset=1')).body
  assert.deepEqual([acme.items.map((e: any) => e.event_id), acme.pagination], [['a1'], { limit: 1, offset: 1, total: 2 }])

  // one event by its event_id (GET /v1/events/{id}, Flexprice's shape)
  const one = await t.api.get('/v1/events/a1')
  assert.equal(one.status, 200, JSON.stringify(one.body))
  assert.deepEqual(one.body, {
    event: { id: 'a1', event_name: 'call', external_customer_id: 'acme', customer_id: a1.customer_id, environment_id: t.environments.production, timestamp: a1.timestamp, source: '', properties: { tokens: 12, model: 'small' } },
    status: 'processed', processed_events: null, debug_tracker: null,
  })
  assertError(await t.api.get('/v1/events/nope'), 404, 'not_found', /event nope not found/)

  const stranger = await p.newTenant()
  assertError(await stranger.api.get('/v1/events/a1'), 404, 'not_found')
  assert.deepEqual((await stranger.api.get('/v1/events')).body, { items: [], pagination: { limit: 50, offset: 0, total: 0 } })
  assertError(await t.api.get('/v1/events?limit=0'), 400, 'validation_error', /limit/)
  assertError(await t.api.get('/v1/events?offset=10001'), 400, 'validation_error', /offset/)
  assertError(await t.api.get('/v1/events?since=1'), 400, 'validation_error', /since/)
  assertError(await p.client().get('/v1/events'), 401, 'permission_denied')
})
