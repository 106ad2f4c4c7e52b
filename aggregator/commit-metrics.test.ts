import { test } from 'node:test'
import assert from 'node:assert/strict'
import { aggregatorLagEvents } from '../platform/business-metrics.js'
import { CommitMetrics } from './commit-metrics.js'

const lagOf = async (topic: string) =>
  Object.fromEntries((await aggregatorLagEvents.get()).values.filter((v) => v.labels.topic === topic).map((v) => [v.labels.partition, v.value]))

test('a consumer reports the lag of its own partitions only: moved or stopped, the series go instead of keeping its last value', async () => {
  const topic = `commit-metrics-${process.pid}`
  const m = new CommitMetrics()
  m.fetched(topic, 0, 5)
  m.fetched(topic, 1, 7)
  m.collect()
  assert.deepEqual(await lagOf(topic), { 0: 5, 1: 7 })
  // A rebalance moved partition 1 to another consumer.
  m.retain(topic, [0])
  m.collect()
  assert.deepEqual(await lagOf(topic), { 0: 5 })
  // The consumer stopped.
  m.retain(topic, [])
  m.collect()
  assert.deepEqual(await lagOf(topic), {})
})

test("a committed record's freshness is split by stage: spool, broker, queue, write, commit add up to the whole", async () => {
  const { writePathStageSeconds } = await import('../platform/business-metrics.js')
  const sums = async () => Object.fromEntries((await writePathStageSeconds.get()).values.filter((v) => v.metricName === 'meterline_write_path_stage_seconds_sum').map((v) => [v.labels.stage, v.value]))
  const before = await sums()
  const m = new CommitMetrics(() => 10_000)
  const batch = { batch_id: 'b', tenant_id: 't', environment_id: 'e', ingested_at: 1_000, events: [] }
  const piece = { stream: 's', first: 0n, last: 0n, fetchedMs: 3_500, records: [{ offset: 0n, batch, producedMs: 1_250 }] }
  m.committed(`stages-${process.pid}`, 0, piece as never, { events: 0, duplicates: 0, meterRows: 0, skipped: {}, perMeter: new Map(), timing: { startedMs: 4_000, visibleMs: 9_000 } })
  const after = await sums()
  const added = Object.fromEntries(Object.keys(after).map((k) => [k, Math.round(((after[k] ?? 0) - (before[k] ?? 0)) * 1000)]))
  assert.deepEqual(added, { spool: 250, broker: 2_250, queue: 500, write: 5_000, commit: 1_000 })
})
