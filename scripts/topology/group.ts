// The aggregator group as the topology sees it: an aggregator process has joined once each of
// its consumers holds partitions (the local broker has no DescribeGroups), and between stopping
// ingest and stopping the aggregators the group has committed everything in the events topic
// (the local broker keeps it in memory only).
import type { Kafka } from 'kafkajs'
import { readConsumerProgress } from '../../platform/kafka.js'

/** Resolves true once every partition's commit reached its end, false after `ms`. */
export async function aggregatorsCaughtUp(kafka: Kafka, topic: string, groupId: string, ms: number): Promise<boolean> {
  const admin = kafka.admin({ retry: { retries: 0 } })
  const deadline = Date.now() + ms
  try {
    await admin.connect()
    for (;;) {
      const progress = await readConsumerProgress(admin, topic, groupId).catch(() => undefined)
      if (progress && progress.every((p) => p.high === p.low || p.committed >= p.high)) return true
      if (Date.now() > deadline) return false
      await new Promise((r) => setTimeout(r, 200))
    }
  } finally {
    await admin.disconnect().catch(() => undefined)
  }
}

/** Resolves true once every consumer of the aggregator process on `port` holds partitions, false after `ms`. */
export async function consumersHoldPartitions(port: number, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/aggregator/consumers`, { signal: AbortSignal.timeout(2000) })
      const { items } = res.ok ? ((await res.json()) as { items: { partitions: number[] }[] }) : { items: [] }
      if (items.length > 0 && items.every((c) => c.partitions.length > 0)) return true
    } catch {
      // starting
    }
  }
  return false
}
