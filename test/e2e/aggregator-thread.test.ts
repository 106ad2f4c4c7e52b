// The aggregator in a worker thread (AGGREGATOR_THREAD=worker, the default of `npm run up`): its
// ClickHouse statements go through the main thread's engine, its committed writes reach the live
// counters, its metrics /metrics, and the admin API drives its consumers.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { ApiClient, eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'
import { created, ingestAll, usage } from '../support/fixtures.js'

const TOKEN = randomBytes(24).toString('hex')
let p: TestPlatform
const admin = (method: string, body?: unknown) =>
  new ApiClient(p.url).request(method, '/v1/admin/aggregators', body, { authorization: `Bearer ${TOKEN}` })

before(async () => {
  p = await startTestPlatform({ config: { aggregatorThread: 'worker', adminToken: TOKEN } })
})
after(async () => {
  await p?.stop()
})

const ev = (id: string, tokens: number, customer: string) => ({
  event_id: id, event_name: 'tokens', external_customer_id: customer, timestamp: '2026-10-15T12:00:00Z', properties: { tokens },
})

test('events are counted exactly once by the worker thread, also while a second consumer joins and leaves', async () => {
  assert.equal(p.aggregator, undefined, 'no aggregator on the main thread')
  const { api } = await p.newTenant()
  const m = await created(api.post('/v1/meters', { name: 't', event_name: 'tokens', aggregation: { type: 'SUM', field: 'tokens' } }))
  const events = Array.from({ length: 3000 }, (_, i) => ev(`e${i}`, (i % 5) + 1, `c${i % 7}`))
  await ingestAll(api, events.slice(0, 1500), 250)
  const join = await admin('PUT', { consumers: 2 })
  assert.equal(join.status, 200, JSON.stringify(join.body))
  assert.equal(join.body.items.length, 2)
  // The first half again (a client retry under new batch ids) and the second half.
  await ingestAll(api, events, 500)
  const expected = events.reduce((s, e) => s + e.properties.tokens, 0)
  const u = await eventually(async () => {
    const r = await usage(api, m.id, {})
    return r.event_count === 3000 && Number(r.value) === expected ? r : undefined
  }, '3000 events counted')
  assert.equal(u.value, String(expected))
  const leave = await admin('PUT', { consumers: 1 })
  assert.equal(leave.body.items.length, 1)
  await ingestAll(api, [ev('late', 100, 'c0'), ev('e1', 2, 'c1')])
  await eventually(async () => ((await usage(api, m.id, {})).event_count === 3001 ? true : undefined), 'the last event counted')
  assert.equal((await usage(api, m.id, {})).value, String(expected + 100))

  // The one consumer left holds every partition and shard again (once the group rebalanced).
  let last: unknown
  await eventually(async () => {
    const list = await admin('GET')
    assert.equal(list.status, 200)
    last = list.body
    return JSON.stringify(list.body.items.map((a: { partitions: number[]; shards: number }) => [a.partitions, a.shards])) === '[[[0,1,2,3],64]]' ? true : undefined
  }, 'one consumer with every partition').catch((err: Error) => assert.fail(`${err.message}: ${JSON.stringify(last)}`))
})

test("/metrics carries the worker thread's series once, beside the main thread's", async () => {
  const text = await (await fetch(`${p.url}/metrics`)).text()
  const sample = (name: string) => text.split('\n').filter((l) => l.startsWith(name))
  // Written by the worker's write stage only.
  const inserts = sample('meterline_clickhouse_insert_duration_seconds_count{table="meter_buckets"}')
  assert.equal(inserts.length, 1, text.slice(0, 2000))
  assert.ok(Number(inserts[0].split(' ')[1]) > 0)
  // Each thread's V8 heap under its own label, and the ClickHouse engine's memory.
  for (const thread of ['main', 'aggregator']) {
    const used = sample(`meterline_thread_heap_bytes{thread="${thread}",kind="used"}`)
    assert.equal(used.length, 1, `${thread} heap`)
    assert.ok(Number(used[0]!.split(' ')[1]) > 1e6)
  }
  const tracked = sample('meterline_clickhouse_memory_bytes{part="tracked"}')
  assert.equal(tracked.length, 1)
  assert.ok(Number(tracked[0]!.split(' ')[1]) > 0)
  // Process-wide series come from the main thread alone (not summed with the worker's).
  assert.equal(sample('process_cpu_seconds_total ').length, 1)
  const cpu = Number(sample('process_cpu_seconds_total ')[0].split(' ')[1])
  assert.ok(cpu > 0 && cpu < process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6 + 1, `process cpu ${cpu}`)
})
