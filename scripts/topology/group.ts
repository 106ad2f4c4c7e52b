// The aggregator group as the topology sees it: its members join one after another at start
// (members joining together race a rebalance, and the local broker answers one of them with a
// protocol error), and between stopping ingest and stopping the aggregators the group has
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

/** Resolves true once the group is stable with at least `members` members, false after `ms`. */
export async function membersJoined(kafka: Kafka, groupId: string, members: number, ms: number): Promise<boolean> {
  const admin = kafka.admin({ retry: { retries: 0 } })
  const deadline = Date.now() + ms
  try {
    await admin.connect()
    for (;;) {
      const { groups } = await admin.describeGroups([groupId]).catch(() => ({ groups: [] }))
      if (groups[0]?.state === 'Stable' && groups[0].members.length >= members) return true
      if (Date.now() > deadline) return false
      await new Promise((r) => setTimeout(r, 200))
    }
  } finally {
    await admin.disconnect().catch(() => undefined)
  }
}
