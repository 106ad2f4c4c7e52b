// The online audit recounts sampled closed minutes while writes go on, and tells a bucket that
// holds an event twice from a correct one.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { MeterDefinition } from '../schemas/meters.js'
import { useChdb } from '../test/support/chdb.js'
import { directWriter, testPool } from '../test/support/writer.js'
import { OnlineAudit } from './online-audit.js'
import { settleBackfills } from './writer.js'

const ch = useChdb('online-audit')

test('sampled closed minutes match their raw events; a doubled bucket is a mismatch', async () => {
  const sum: MeterDefinition = { id: 'oa-sum', tenant_id: 'oa', environment_id: 'env', event_name: 'call', filters: [], aggregation: { type: 'SUM', field: 'n' } }
  const w = await directWriter(ch(), { version: async () => 'v', load: async () => [sum] })
  await settleBackfills(w, [sum.id])
  const minute = Math.floor((Date.now() - 10 * 60_000) / 60_000) * 60_000
  const events = Array.from({ length: 30 }, (_, i) => ({
    event_id: `oa-${i}`, event_name: 'call', external_customer_id: `c${i % 3}`, customer_id: null, timestamp: minute + i * 1000, source: null, properties: JSON.stringify({ n: i }),
  }))
  await w.stage.add({ stream: 's', first: 0n, last: 0n, records: [{ offset: 0n, batch: { batch_id: 'b', tenant_id: 'oa', environment_id: 'env', ingested_at: Date.now(), events } }] })
  const lines: string[] = []
  const audit = new OnlineAudit(ch(), testPool(), w.store, w.meters, (m) => lines.push(m))
  const results = await audit.run(10)
  assert.equal(results.length, 3, 'three customers had that minute')
  assert.ok(results.every((r) => r.same), JSON.stringify(results))
  assert.equal(results.reduce((s, r) => s + Number(r.raw.value), 0), (29 * 30) / 2)

  // A bucket row that counts event oa-0 of c0 a second time (what a double count looks like).
  await ch().insertCompact('meter_buckets', [['oa', 'env', sum.id, 'c0', minute / 1000, [], '', '5', 1, '5', [0, '', '0'], [], '', [], '']])
  const r = await audit.compare({ meter: sum, customer: 'c0', minute: minute / 1000 })
  assert.equal(r.same, false)
  assert.equal(r.buckets.events, r.raw.events + 1)
})
