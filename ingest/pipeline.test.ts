// enrich: which events ingest stamped with their arrival (schemas/events.ts stampedOnArrival).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { stampedOnArrival } from '../schemas/events.js'
import { enrich } from './pipeline.js'

const tenancy = { tenantId: 't', environmentId: 'e' }
const NOW = Date.parse('2026-11-28T12:00:00.000Z')

test('events sent without a timestamp take the arrival; only they are stamped, even when a sent timestamp equals the arrival', () => {
  const batch = enrich([
    { event_id: 'a', event_name: 'call', external_customer_id: 'c' },
    { event_id: 'b', event_name: 'call', external_customer_id: 'c', timestamp: new Date(NOW).toISOString() },
    { event_id: 'c', event_name: 'call', external_customer_id: 'c', timestamp: new Date(NOW + 1).toISOString() },
  ], tenancy, NOW)
  assert.equal(batch.ingested_at, NOW + 2, 'moved past the two sent instants')
  assert.deepEqual(batch.events.map((e) => [e.event_id, e.timestamp, stampedOnArrival(batch, e)]), [
    ['a', NOW + 2, true],
    ['b', NOW, false],
    ['c', NOW + 1, false],
  ])
  const plain = enrich([{ event_id: 'd', event_name: 'call', external_customer_id: 'c', timestamp: '2026-11-27T00:00:00Z' }], tenancy, NOW)
  assert.deepEqual([plain.ingested_at, stampedOnArrival(plain, plain.events[0])], [NOW, false])
})
