// Ingest on its own thread (INGEST_THREAD=worker): the main thread authenticates and hands the
// raw body over. Every answer equals the one ingest on the main thread gives (validation, limits,
// refusals); accepted events are counted exactly once; the spool's safe instant, its metrics and
// its drain reach the main thread.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { ApiClient, eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'
import { created, ingestAll, usage } from '../support/fixtures.js'

const BODY_LIMIT = 256 * 1024
let threaded: TestPlatform
let inline: TestPlatform

before(async () => {
  ;[threaded, inline] = await Promise.all([
    startTestPlatform({ config: { ingestThread: 'worker', ingestBodyLimitBytes: BODY_LIMIT, apiKeyCacheTtlMs: 0 } }),
    startTestPlatform({ services: ['billing-api', 'ingest'], config: { ingestThread: 'main', ingestBodyLimitBytes: BODY_LIMIT, apiKeyCacheTtlMs: 0 } }),
  ])
})
after(async () => {
  await Promise.all([threaded?.stop(), inline?.stop()])
})

const ev = (id: string, tokens: number, customer: string) => ({
  event_id: id, event_name: 'tokens', external_customer_id: customer, timestamp: '2026-10-15T12:00:00Z', properties: { tokens },
})

/** Generated ids differ between the two platforms; everything else must not. */
const comparable = (body: unknown) => JSON.stringify(body).replace(/"(batch|evt)_[0-9A-Z]{26}"/g, '"<id>"').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')

test('every answer of the ingest routes is the one ingest on the main thread gives', async () => {
  assert.ok(threaded.spoolHandle && !threaded.spool, 'ingest and its spool run on their own thread')
  assert.equal(threaded.spool, undefined, 'no spool on the main thread')
  assert.ok(inline.spool && inline.spoolHandle === inline.spool)
  const t = await threaded.newTenant()
  const ro = await created(t.api.post('/v1/secrets/api/keys', { name: 'dashboard', scope: 'read_only' }))
  const huge = { events: Array.from({ length: 4000 }, (_, i) => ev(`big-${i}`, 1, 'c')) }
  const cases: [string, string, string | undefined, Record<string, string>][] = [
    ['bulk', '/v1/events/raw/bulk', JSON.stringify({ events: [ev('a-1', 1, 'c'), ev('a-2', 2, 'c')] }), {}],
    ['single', '/v1/events', JSON.stringify(ev('a-3', 3, 'c')), {}],
    ['single without an id', '/v1/events', JSON.stringify({ event_name: 'tokens', external_customer_id: 'c' }), {}],
    ['malformed JSON', '/v1/events/raw/bulk', '{"events": [', {}],
    ['a missing field', '/v1/events/raw/bulk', JSON.stringify({ events: [ev('b-1', 1, 'c'), { event_id: 'b-2', external_customer_id: 'c' }] }), {}],
    ['a bad timestamp', '/v1/events/raw/bulk', JSON.stringify({ events: [{ ...ev('b-3', 1, 'c'), timestamp: '1999-01-01T00:00:00Z' }] }), {}],
    ['an empty batch', '/v1/events/raw/bulk', JSON.stringify({ events: [] }), {}],
    ['no body', '/v1/events/raw/bulk', undefined, {}],
    ['text/plain', '/v1/events', JSON.stringify(ev('b-4', 1, 'c')), { 'content-type': 'text/plain' }],
    ['another content type', '/v1/events', '<event/>', { 'content-type': 'application/xml' }],
    ['a body over the limit', '/v1/events/raw/bulk', JSON.stringify(huge), {}],
    ['a read-only key', '/v1/events', JSON.stringify(ev('b-5', 1, 'c')), { 'x-api-key': ro.api_key }],
    ['no key', '/v1/events', JSON.stringify(ev('b-6', 1, 'c')), { 'x-api-key': '' }],
  ]
  assert.ok(huge.events.length * 100 > BODY_LIMIT)
  for (const [name, path, body, headers] of cases) {
    const send = async (p: TestPlatform) => {
      const h: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': t.apiKey, ...headers }
      if (h['x-api-key'] === '') delete h['x-api-key']
      if (body === undefined) delete h['content-type']
      const res = await fetch(`${p.url}${path}`, { method: 'POST', headers: h, body })
      return { status: res.status, type: res.headers.get('content-type'), body: comparable(await res.json()) }
    }
    const [a, b] = [await send(threaded), await send(inline)]
    assert.deepEqual(a, b, `${name}: the threaded answer ${JSON.stringify(a)} differs from the main thread's ${JSON.stringify(b)}`)
    assert.ok(a.status === 202 || /"code":"[a-z_]+","http_status_code":\d+/.test(a.body), `${name}: ${a.body}`)
  }
})

test('events accepted by the ingest thread are counted exactly once, also when resent under new batch ids', async () => {
  const { api } = await threaded.newTenant()
  const sum = await created(api.post('/v1/meters', { name: 't', event_name: 'tokens', aggregation: { type: 'SUM', field: 'tokens' } }))
  const count = await created(api.post('/v1/meters', { name: 'n', event_name: 'tokens', aggregation: { type: 'COUNT' } }))
  const events = Array.from({ length: 3000 }, (_, i) => ev(`e${i}`, (i % 5) + 1, `c${i % 7}`))
  await Promise.all([ingestAll(api, events.slice(0, 1500), 250), ingestAll(api, events, 500)])
  const acknowledged = Date.now()
  const expected = events.reduce((s, e) => s + e.properties.tokens, 0)
  await eventually(async () => {
    const [s, n] = [await usage(api, sum.id, {}), await usage(api, count.id, {})]
    return s.value === String(expected) && n.value === '3000' ? true : undefined
  }, '3000 events counted once')
  assert.equal((await usage(api, sum.id, {})).event_count, 3000)
  // The spool's safe instant passes the last acknowledgement once everything is counted.
  await eventually(async () => ((threaded.spoolHandle!.safeBefore() ?? 0) >= acknowledged ? true : undefined), 'the safe instant to pass the last 202', 10_000)
  assert.equal(await threaded.spoolHandle!.oldestUnforwardedMs(), 0)

  // /metrics: the worker's ingest series beside the main thread's HTTP series, each once.
  const text = await (await fetch(`${threaded.url}/metrics`)).text()
  const sample = (name: string) => text.split('\n').filter((l) => l.startsWith(name))
  const accepted = sample('meterline_ingest_events_accepted_total')
  assert.equal(accepted.length, 1, accepted.join('\n'))
  assert.ok(Number(accepted[0].split(' ').pop()) >= 4500, accepted[0])
  const bulkRequests = sample('meterline_http_request_duration_seconds_count').filter((l) => l.includes('service="all-in-one"') && l.includes('/v1/events/raw/bulk') && l.includes('status_code="202"'))
  assert.equal(bulkRequests.length, 1, bulkRequests.join('\n'))
  assert.ok(Number(bulkRequests[0].split(' ').pop()) >= 9, bulkRequests[0])
})

test('the drain leaves nothing behind and later requests are refused with 503', async () => {
  const { api } = await threaded.newTenant()
  await ingestAll(api, Array.from({ length: 200 }, (_, i) => ev(`d${i}`, 1, 'c')), 100)
  const drained = await threaded.spoolHandle!.drain(20_000)
  assert.deepEqual({ ...drained, ms: 0 }, { batches: 0, events: 0, bytes: 0, ms: 0 })
  assert.deepEqual(threaded.spoolHandle!.left(), drained)
  const refused = await new ApiClient(threaded.url, api.apiKey).post('/v1/events', ev('after', 1, 'c'))
  assert.equal(refused.status, 503, JSON.stringify(refused.body))
  assert.equal(refused.body.code, 'service_unavailable')
})
