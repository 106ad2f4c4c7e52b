// In-doubt markers are bounded: a shard's markers of one month share one sorting key, so merges
// keep the newest write's alone (the only one that can be in doubt: a dirty shard is recovered
// before it writes again). Before, every write left its own marker row for ever (about 32 bytes
// an event, some 19 GB a day at 10,000 events/s).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { useChdb } from '../test/support/chdb.js'
import { ALL_SHARDS as ALL, meterSource as source, writeFixtures } from '../test/support/write-fixtures.js'

const ch = useChdb('write-markers')
const T0 = Date.parse('2026-10-31T23:59:00Z') // events span two month parts
const { fixture, writer, events, piece, usage } = writeFixtures(ch, T0, 'wm')

async function markers(): Promise<{ rows: number; places: number; bytes: number }> {
  await ch().command(`OPTIMIZE TABLE ${ch().table('meter_buckets')} FINAL`)
  const [r] = await ch().query<{ rows: string; places: string; bytes: string }>(
    `SELECT toString(count()) AS rows, toString(uniqExact(substring(external_customer_id, 1, 3), bucket_start)) AS places, toString(sum(length(ledger))) AS bytes
       FROM ${ch().table('meter_buckets')} WHERE meter_id = '~doubt'`,
  )
  return { rows: Number(r.rows), places: Number(r.places), bytes: Number(r.bytes) }
}

test('markers of 40 writes merge into one row per (shard, month): their bytes do not grow with the writes', async () => {
  const { tenant, cnt } = fixture()
  const w = await writer(source([cnt]), ALL)
  for (let i = 0; i < 20; i++) await w.stage.add(piece(tenant, `a-${i}`, events(`a-${i}`, 40)))
  const after20 = await markers()
  for (let i = 0; i < 20; i++) await w.stage.add(piece(tenant, `b-${i}`, events(`b-${i}`, 40)))
  const after40 = await markers()
  assert.equal(await usage(tenant, cnt), String(40 * 40))
  assert.equal(after40.rows, after40.places, `one marker row per (shard, month) after merges (${after40.rows} rows in ${after40.places} places)`)
  assert.ok(after40.bytes <= after20.bytes * 1.5, `marker bytes after 40 writes (${after40.bytes}) about those after 20 (${after20.bytes})`)
})

test('a crash after the bucket block, then merges, then a replay on a new writer: the in-doubt write is finished from its marker, counted once', async () => {
  const { tenant, cnt, sum } = fixture()
  const meters = source([cnt, sum])
  const a = await writer(meters, ALL)
  for (let i = 0; i < 5; i++) await a.stage.add(piece(tenant, `before-${i}`, events(`before-${i}`, 20)))
  const crashing = await writer(meters, ALL, { hooks: { afterBuckets: () => { throw new Error('killed afterBuckets') } } })
  const evs = events('doubt', 30)
  await assert.rejects(crashing.stage.add(piece(tenant, 'original', evs)), /killed/)
  await markers() // every marker merged: the in-doubt one must be what is left
  const b = await writer(meters, ALL)
  await b.stage.add(piece(tenant, 'retry', evs))
  assert.equal(await usage(tenant, cnt), String(5 * 20 + 30))
  assert.equal(await usage(tenant, sum), String(5 * ((20 * 21) / 2) + (30 * 31) / 2))
})
