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
