// Scope loads of the live counters against the per-counter read, on a real chDB engine written
// through the aggregator's write stage: the same answers for every customer (one without usage
// too), one statement per (meter, period) instead of one per customer, and increments that race
// the scope's read applied exactly once (never ahead of the buckets).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Piece } from '../../aggregator/write-stage.js'
import type { WriteStage } from '../../aggregator/write-stage.js'
import { queryMeterUsage, type UsageQuery } from '../../clickhouse/queries/meter-usage.js'
import type { CommittedWrite } from '../../schemas/committed-write.js'
import type { UsageEvent } from '../../schemas/events.js'
import type { MeterDefinition } from '../../schemas/meters.js'
import { useChdb } from '../../test/support/chdb.js'
import { eventually } from '../../test/support/platform.js'
import { directStage } from '../../test/support/writer.js'
import type { UsageReader } from '../context.js'
import { clickhouseUsage } from '../meters/index.js'
import { LiveCounters, type CounterQuery, type LiveAggregation } from './counters.js'

const ch = useChdb('live-counters')
const AGGS: LiveAggregation[] = ['SUM', 'COUNT', 'MAX', 'AVG']
// A period starting mid-minute: its first minute is an edge read from the per-event rows.
const START = new Date('2026-09-01T00:00:30Z')
const END = new Date('2026-10-01T00:00:00Z')
const CUSTOMERS = ['c1', 'c2', 'c3', 'c4', 'c5']
const NOBODY = 'c-without-usage'

interface World {
  tenant: string
  stage: WriteStage
  committed: CommittedWrite[]
  /** told each write as it is published (after its buckets are durable) */
  onWrite?: (w: CommittedWrite) => void
  write(customers: string[], n: number, at?: number): Promise<CommittedWrite[]>
  truth(agg: LiveAggregation, customer: string): Promise<{ value: string; event_count: string }>
  query(agg: LiveAggregation, customer: string): CounterQuery
}

async function world(name: string): Promise<World> {
  const tenant = `${name}-${Date.now()}`
  const meters: MeterDefinition[] = AGGS.map((type) => ({
    id: `m-${type}`, tenant_id: tenant, environment_id: 'env', event_name: 'use', filters: [],
    aggregation: { type, field: type === 'COUNT' ? null : 'n', group_by: null },
  }))
  const committed: CommittedWrite[] = []
  const stage = await directStage(ch(), { version: async () => 'v1', load: async () => meters }, {
    onCommittedWrite: (x) => {
      committed.push(x)
      w.onWrite?.(x)
    },
  })
  let offset = 0n
  let seq = 0
  const w: World = {
    tenant, stage, committed,
    async write(customers, n, at = Date.parse('2026-09-10T12:00:00Z')) {
      const before = committed.length
      const events: UsageEvent[] = []
      for (const c of customers) {
        for (let i = 0; i < n; i++) {
          seq++
          events.push({
            event_id: `${name}-${seq}`, event_name: 'use', external_customer_id: c, customer_id: null, timestamp: at + (seq % 10) * 1000,
            source: 'api', properties: JSON.stringify({ n: `${(seq % 7) + 1}.${seq % 10}5` }),
          })
        }
      }
      const piece: Piece = {
        stream: `${tenant}/0`, first: offset, last: offset,
        records: [{ offset, batch: { batch_id: `b${offset}`, tenant_id: tenant, environment_id: 'env', ingested_at: Date.now(), events } }],
      }
      offset++
      await stage.add(piece)
      return committed.slice(before)
    },
    async truth(agg, customer) {
      const q: UsageQuery = { tenantId: tenant, environmentId: 'env', meterId: `m-${agg}`, aggregation: agg, externalCustomerId: customer, start: START, end: END }
      const [row] = await queryMeterUsage(ch(), q)
      return { value: row?.value ?? '0', event_count: row?.event_count ?? '0' }
    },
    query: (agg, customer) => ({ tenantId: tenant, environmentId: 'env', meterId: `m-${agg}`, aggregation: agg, externalCustomerId: customer, start: START, end: END }),
  }
  return w
}

/** The identities of writes a bucket read already holds (what the publisher records in Redis). */
const marks = (ws: CommittedWrite[]) => {
  const out = new Map<string, bigint>()
  for (const w of ws) for (const x of w.writes) {
    const k = `${x.shard}|${x.epoch}`
    if (BigInt(x.seq) > (out.get(k) ?? -1n)) out.set(k, BigInt(x.seq))
  }
  return out
}

/** Counts statements, and those reading a whole scope (one row per customer). */
function counting(read: UsageReader) {
  const n = { single: 0, scope: 0 }
  const reader: UsageReader = (q) => {
    if (q.byCustomer) n.scope++
    else n.single++
    return read(q)
  }
  return { n, reader }
}

test('a scope load answers as the per-counter read does, for every customer, in one statement per meter and period', async () => {
  const w = await world('same')
  await w.write(CUSTOMERS, 3)
  await w.write(CUSTOMERS.slice(0, 2), 4, START.getTime() - 20_000) // before the period: not counted
  await w.write(['c1'], 2, START.getTime() + 5_000) // in the edge minute
  const held = marks(w.committed)
  const single = counting(clickhouseUsage(ch()))
  const scoped = counting(clickhouseUsage(ch()))
  const a = new LiveCounters(single.reader, 1000, async () => true, false)
  const b = new LiveCounters(scoped.reader, 1000, async () => true, true)
  a.seedHighWater(held)
  b.seedHighWater(held)
  b.heard(5_000)
  const all = [...CUSTOMERS, NOBODY]
  const compare = async (what: string) => {
    for (const agg of AGGS) {
      for (const c of all) {
        const truth = await w.truth(agg, c)
        const [va, vb] = await Promise.all([a.get(w.query(agg, c)), b.get(w.query(agg, c))])
        assert.deepEqual({ value: va.value, event_count: va.event_count }, truth, `${what}: per-counter ${agg} ${c}`)
        assert.deepEqual({ value: vb.value, event_count: vb.event_count }, truth, `${what}: scope ${agg} ${c}`)
      }
    }
  }
  await compare('first reads')
  assert.equal(single.n.single, AGGS.length * all.length)
  // The first customer of a scope reads its one counter; the second loads the whole scope.
  assert.deepEqual(scoped.n, { single: AGGS.length, scope: AGGS.length })
  assert.ok(Number((await b.get(w.query('SUM', 'c2'))).value) > 0)
  assert.equal((await b.get(w.query('SUM', NOBODY))).value, '0')

  // Writes after the load move both forward, a customer new to the scope starts from zero, and
  // a replayed write is skipped by both.
  const later = [...await w.write(['c2', 'c3', 'c-new'], 2), ...await w.write(['c-new'], 1, START.getTime() + 10_000)]
  b.heard(6_000)
  for (const x of later) {
    a.apply(x)
    b.apply(x)
    b.apply(x) // a replay
  }
  b.heard(7_000)
  // c-new's edge-minute write could not be added (only the per-event read knows its events):
  // it answers with the usage_as_of before that write, and a check reads it again in the background.
  for (const agg of AGGS) {
    assert.equal((await b.get(w.query(agg, 'c-new'))).asOf, 6_000)
    await eventually(async () => ((await b.get(w.query(agg, 'c-new'))).asOf === 7_000 ? true : undefined), `c-new ${agg} read again`, 10_000)
  }
  // A write whose insert began just as a read ended may be in it: not added, read again (the
  // checks start those reads); so both settle on the buckets.
  let last: unknown
  await eventually(async () => {
    try {
      await compare('after writes')
      for (const agg of AGGS) {
        const truth = await w.truth(agg, 'c-new')
        const vb = await b.get(w.query(agg, 'c-new'))
        assert.deepEqual({ value: vb.value, event_count: vb.event_count }, truth, `scope ${agg} c-new`)
      }
      return true
    } catch (err) {
      last = err
      return undefined
    }
  }, 'the counters settle after the writes', 15_000).catch((err: Error) => {
    throw new Error(`${err.message}: ${String(last)}`)
  })
  assert.ok(scoped.n.scope > AGGS.length, 'the doubtful customer was read again')
  assert.ok(b.size > 0)
})

test('increments that race the scope read are applied exactly once', async () => {
  const w = await world('race')
  await w.write(CUSTOMERS, 2)
  // The scope read is held (1) before its statement runs, then (2) after it ran, before its
  // rows come back; writes land and are heard (as published) in between.
  let phase: 'before' | 'after' | 'off' = 'off'
  let during: CommittedWrite[] = []
  const plain = clickhouseUsage(ch())
  let counters!: LiveCounters
  w.onWrite = (x) => counters?.apply(x)
  const reader: UsageReader = async (q) => {
    if (!q.byCustomer || phase === 'off') return plain(q)
    if (phase === 'before') {
      during = await w.write(['c1', 'c2'], 3) // committed before the statement: the read holds it
      return plain(q)
    }
    const rows = await plain(q)
    during = await w.write(['c1', 'c3'], 3) // committed after: the read does not hold it
    return rows
  }
  for (const p of ['before', 'after'] as const) {
    phase = 'off'
    counters = new LiveCounters(reader, 1000, async () => true, true)
    counters.seedHighWater(marks(w.committed))
    counters.heard(1_000)
    await counters.get(w.query('SUM', 'c5')) // the first miss: one counter
    phase = p
    counters.heard(2_000)
    // Concurrent misses of several customers wait for the one scope read.
    const first = await Promise.all(CUSTOMERS.map(async (c) => ({ c, v: await counters.get(w.query('SUM', c)) })))
    phase = 'off'
    counters.heard(3_000)
    const racing = new Set(during.flatMap((x) => x.buckets.map((bk) => bk.external_customer_id)))
    assert.ok(racing.size > 0)
    for (const { c, v } of first) {
      const truth = await w.truth('SUM', c)
      if (!racing.has(c)) {
        assert.deepEqual({ value: v.value, event_count: v.event_count }, truth, `${p}: ${c}`)
        continue
      }
      // In doubt: never ahead of the buckets, and its usage_as_of is the load's start.
      assert.ok(Number(v.event_count) <= Number(truth.event_count), `${p}: ${c} ahead of the buckets`)
      if (p === 'after') assert.ok(Number(v.event_count) < Number(truth.event_count), `${p}: ${c} holds a write its read did not`)
      assert.equal(v.asOf, 2_000, `${p}: ${c} usage_as_of`)
    }
    // The next check reads the doubtful customers again (one statement), then every answer is
    // exact with the racing writes counted once; replays of every write change nothing.
    for (const c of racing) await eventually(async () => ((await counters.get(w.query('SUM', c))).asOf === 3_000 ? true : undefined), `${c} read again`, 10_000)
    for (const x of w.committed) counters.apply(x)
    for (const c of [...CUSTOMERS, NOBODY]) {
      const truth = await w.truth('SUM', c)
      const v = await counters.get(w.query('SUM', c))
      assert.deepEqual({ value: v.value, event_count: v.event_count }, truth, `${p}, settled: ${c}`)
      assert.equal(v.asOf, 3_000, `${p}, settled: ${c} usage_as_of`)
    }
    // A write after that is counted once (added, or read again if its insert began as a read ended).
    await w.write(['c3', NOBODY], 1)
    for (const c of ['c3', NOBODY]) {
      const truth = await w.truth('SUM', c)
      await eventually(async () => {
        const v = await counters.get(w.query('SUM', c))
        assert.ok(Number(v.event_count) <= Number(truth.event_count), `${p}, a later write: ${c} ahead of the buckets`)
        return v.value === truth.value && v.event_count === truth.event_count ? true : undefined
      }, `${p}, a later write: ${c}`, 10_000)
    }
  }
})

test('a write published after a read that already holds it is not counted twice', async () => {
  const w = await world('late')
  await w.write(CUSTOMERS, 1)
  for (const scoped of [false, true]) {
    // Its buckets are in, its message is late (dedup keys and the Postgres record come first).
    const late = await w.write(['c1', 'c2'], 2)
    const counters = new LiveCounters(clickhouseUsage(ch()), 1000, async () => true, scoped)
    counters.seedHighWater(marks(w.committed.filter((x) => !late.includes(x))))
    // c1 reads its one counter, c2 (scoped) the whole scope: both hold the late write.
    for (const c of ['c1', 'c2', 'c3']) await counters.get(w.query('SUM', c))
    for (const x of late) counters.apply(x)
    for (const c of ['c1', 'c2', 'c3']) {
      const truth = await w.truth('SUM', c)
      await eventually(async () => {
        const v = await counters.get(w.query('SUM', c))
        assert.ok(Number(v.event_count) <= Number(truth.event_count), `scoped ${scoped}: ${c} ahead of the buckets (${v.event_count} > ${truth.event_count})`)
        return v.value === truth.value && v.event_count === truth.event_count ? true : undefined
      }, `scoped ${scoped}: ${c}`, 10_000)
    }
  }
})
