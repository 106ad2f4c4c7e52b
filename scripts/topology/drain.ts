// Between stopping ingest and stopping the aggregators: wait until the aggregator group has
// committed everything in the events topic (the local broker keeps it in memory only).
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
