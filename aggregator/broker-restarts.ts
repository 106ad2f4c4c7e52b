// The in-memory local broker forgets everything when it restarts: an aggregator consumer tags
// each fetched piece with the restarts it was fetched under (a piece of an emptied broker is never
// committed), reads every assigned partition again from 0 after a restart, and distrusts a
// committed offset made on another generation of the broker. The write stage makes each re-read
// exact.
import type { ConsumerState } from './consumer-state.js'

/** Remembers the restarts seen when each broker node's fetch began (`ConsumerState.fetchStarts`). */
export function trackFetches(c: ConsumerState): void {
  c.consumer.on(c.consumer.events.FETCH_START, ({ payload }) => void c.fetchStarts.set(payload.nodeId, { restarts: c.restarts, at: Date.now() }))
}

/** The restarts a batch handed over now was fetched under. */
export function fetchedUnder(c: ConsumerState): number {
  const recent = Date.now() - 60_000
  return Math.min(c.restarts, ...[...c.fetchStarts.values()].filter((f) => f.at > recent).map((f) => f.restarts))
}

/** The in-memory broker restarted empty: every assigned partition is read again from 0. */
export function brokerRestarted(c: ConsumerState): void {
  c.restarts++
  for (const partition of c.assignment) {
    const state = c.partitions.get(partition)
    if (state) state.next = 0n
    try {
      c.consumer.seek({ topic: c.topic, partition, offset: '0' })
    } catch (err) {
      c.log(`seek to 0 on ${c.topic}[${partition}] after a broker restart failed`, err)
    }
  }
}

/**
 * Whether the group's committed offset of a partition was made on another generation of the
 * local broker (its metadata names the generation its piece was fetched in). A consumer that had
 * not yet noticed an empty restart commits the old broker's offsets under the old name; a
 * partition state made afresh at that position would then pass records nobody read. Returns a
 * description of the stale commit, or undefined when the position can be trusted.
 */
async function staleCommit(c: ConsumerState, topic: string, partition: number): Promise<string | undefined> {
  if (!c.watch || c.stopping) return undefined
  const known = c.watch.current
  const current = await c.watch.read()
  if (current === null) return undefined
  if (current === undefined || current !== known) return 'the broker generation is unknown or just changed'
  if (c.stopping) return undefined
  c.admin ??= c.kafka.admin({ retry: { retries: 2 } })
  await c.admin.connect()
  if (c.stopping) {
    await c.admin.disconnect().catch(() => undefined)
    return undefined
  }
  const [offsets] = await c.admin.fetchOffsets({ groupId: c.groupId, topics: [topic] })
  const p = offsets?.partitions.find((x) => x.partition === partition)
  if (!p || Number(p.offset) < 0) return undefined
  return (p.metadata || null) === current ? undefined : `offset ${p.offset} named ${p.metadata || 'no generation'}`
}

/**
 * A partition this consumer has no state for, whose committed offset is stale: its state
 * starts at 0 and the consumer reads it again from there (the write stage makes that exact).
 * Runs at assignment (a stale position may lie past the new broker's end, where no batch comes)
 * and before the first batch.
 */
export async function adoptStale(c: ConsumerState, topic: string, partition: number): Promise<boolean> {
  const stale = await staleCommit(c, topic, partition)
  if (!stale || c.partitions.has(partition) || !c.assignment.includes(partition)) return false
  c.partitions.set(partition, { chain: Promise.resolve(), next: 0n, inflight: [] })
  c.log(`the committed offset of ${topic}[${partition}] (${stale}) was not made on this broker generation; reading the partition again from 0`)
  c.consumer.seek({ topic, partition, offset: '0' })
  return true
}
