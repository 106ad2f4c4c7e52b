// The client example against the real platform (HTTP, spool, broker, aggregator, chDB,
// Postgres), and the ingest wrapper's retries: a lost answer is resent with the same event ids
// and counted once; a refused request is not retried.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { usePlatform } from '../../test/support/platform.js'
import { createMeterlineClient, IngestError, ingestEvents } from '../src/index.js'
import { ingestAndInvoice } from './ingest-and-invoice.js'

const p = usePlatform()
const noWait = async () => {}

test('the example ingests 250 events and reads an exact invoice through the typed client', async () => {
  const { apiKey } = await p.newTenant('Client example')
  const client = createMeterlineClient({ baseUrl: p.url, apiKey })
  const result = await ingestAndInvoice(client, { customer: 'acme', events: 250, ingest: { sleep: noWait } })
  assert.equal(result.eventIds.length, 250)
  assert.equal(new Set(result.eventIds).size, 250)
  // tokens cycle 1..10: 25 cycles x 55 = 1375; 1375 x 0.002 = 2.75, plus the 10.00 fee
  assert.equal(result.tokens, '1375')
  assert.equal(result.invoice.total, '12.75')
  assert.equal(result.invoice.currency, 'USD')
  const byName = Object.fromEntries(result.invoice.lines.map((l) => [l.display_name, l]))
  assert.deepEqual(byName.Tokens, { display_name: 'Tokens', quantity: '1375', amount: '2.75' })
  assert.equal(byName['Platform fee'].amount, '10.00')
})

test('an answer lost after the server accepted the request is resent with the same ids and counted once', async () => {
  const { apiKey } = await p.newTenant('Lost answers')
  const bodies: string[] = []
  let lost = 0
  // The request reaches the server and is accepted; the connection then "drops" before the
  // client reads the answer, twice. The wrapper cannot know the events were accepted.
  const lossyFetch = async (req: Request): Promise<Response> => {
    const isBulk = req.url.endsWith('/v1/events/raw/bulk')
    if (isBulk) bodies.push(await req.clone().text())
    const res = await fetch(req)
    if (isBulk && lost < 2) {
      lost++
      await res.arrayBuffer()
      throw new TypeError('fetch failed: socket hang up')
    }
    return res
  }
  const retries: string[][] = []
  const client = createMeterlineClient({ baseUrl: p.url, apiKey, fetch: lossyFetch })
  const result = await ingestAndInvoice(client, {
    customer: 'acme',
    events: 250,
    ingest: { sleep: noWait, onRetry: (r) => retries.push(r.eventIds) },
  })
  assert.equal(bodies.length, 3, 'one request, sent three times')
  assert.equal(bodies[1], bodies[0], 'the resend is byte for byte the first request')
  assert.equal(bodies[2], bodies[0])
  assert.equal(retries.length, 2)
  assert.deepEqual(retries[0], result.eventIds)
  // Counted once: 3 deliveries of 250 events would read 4125 tokens and 750 events.
  assert.equal(result.tokens, '1375')
  assert.equal(result.invoice.total, '12.75')
})

test('a refused request fails at once with the ErrorResponse and the ids to resend', async () => {
  const { apiKey } = await p.newTenant('Refused')
  const client = createMeterlineClient({ baseUrl: p.url, apiKey })
  let retried = 0
  const err = await ingestEvents(client, [{ event_id: 'old-1', event_name: 'llm_call', external_customer_id: 'acme', timestamp: '1990-01-01T00:00:00Z' }], {
    sleep: noWait,
    onRetry: () => retried++,
  }).then(
    () => assert.fail('a 1990 timestamp is outside the accepted window'),
    (e: unknown) => e,
  )
  assert.ok(err instanceof IngestError)
  assert.equal(err.status, 400)
  assert.equal(err.attempts, 1)
  assert.equal(retried, 0)
  assert.equal(err.body?.code, 'validation_error')
  assert.equal(err.body?.http_status_code, 400)
  assert.match(err.body?.message ?? '', /events\[0\]\.timestamp/)
  assert.deepEqual(err.eventIds, ['old-1'])
})

test("another tenant's key reads none of the example's records", async () => {
  const a = await p.newTenant('Owner')
  const b = await p.newTenant('Stranger')
  const owner = createMeterlineClient({ baseUrl: p.url, apiKey: a.apiKey })
  const stranger = createMeterlineClient({ baseUrl: p.url, apiKey: b.apiKey })
  const meter = await owner.POST('/v1/meters', { body: { name: 'Calls', event_name: 'call', aggregation: { type: 'COUNT' } } })
  const id = String(meter.data?.id)
  const res = await stranger.GET('/v1/meters/{id}', { params: { path: { id } } })
  assert.equal(res.response.status, 404)
  assert.equal(res.error?.code, 'not_found')
  assert.equal((await owner.GET('/v1/meters/{id}', { params: { path: { id } } })).response.status, 200)
})
