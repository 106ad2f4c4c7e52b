// Per partition, the steps of pipeline.ts for each fetched batch: decode -> write (handed to the
// write stage at once) -> commit (in order, on the partition's chain) -> count. A failed piece,
// or a gap before one, re-reads the partition from its last commit.
import type { EachBatchPayload } from 'kafkajs'
import { aggregatorConsumerLag, aggregatorFetchHeldSeconds } from '../platform/metrics.js'
import { adoptStale, fetchedUnder } from './broker-restarts.js'
import type { ConsumerState, Fetched, PartitionState } from './consumer-state.js'
import { commit, count, decode, write } from './pipeline.js'
import type { Piece, PieceResult } from './write-stage.js'

/** fetched pieces per partition that may wait for their writes */
const LOOKAHEAD = 16

/** kafkajs' `eachBatch` of the consumer. */
export function eachBatchOf(c: ConsumerState): (payload: EachBatchPayload) => Promise<void> {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kafkajs hands these over as plain functions
  return async function eachBatch({ batch, resolveOffset, heartbeat }: EachBatchPayload): Promise<void> {
    if (batch.messages.length === 0) return
    const seq = ++c.batchSeq
    c.hooks?.beforeBatch?.({ partition: batch.partition, fetchedOffset: String((batch as { fetchedOffset?: string }).fetchedOffset), seq })
    const { piece, bytes } = decode(c.groupId, batch)
    const { first, last } = piece
    let state = c.partitions.get(batch.partition)
    if (!state) {
      if (await adoptStale(c, batch.topic, batch.partition)) return
      state = c.partitions.get(batch.partition) ?? { chain: Promise.resolve(), next: first, inflight: [] }
      c.partitions.set(batch.partition, state)
    }
    // Handed to the write stage at once, so pieces fetched while a write runs join the next one
    // (the local broker returns one producer batch per partition and fetch); offsets are
    // committed in order on the chain. A piece written after an earlier one failed is replayed
    // with it from the last commit, and its events are then duplicates.
    const fetched: Fetched = { restarts: fetchedUnder(c), seq, name: c.watch?.current ?? null }
    const written = piece.records.length === 0 ? undefined : write(c.stage, piece)
    written?.catch(() => undefined)
    const previous = state.chain
    state.chain = previous.then(() =>
      written === undefined
        ? undefined
        : persist(c, batch.topic, batch.partition, piece, bytes, written, fetched).catch((err) => rewind(c, batch.topic, batch.partition, err)),
    )
    state.inflight.push(state.chain)
    resolveOffset(batch.lastOffset())
    const recordsBehind = Number(BigInt(batch.highWatermark) - last - 1n)
    aggregatorConsumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, recordsBehind)
    c.commitMetrics.fetched(batch.topic, batch.partition, recordsBehind)
    await heartbeat()
    // Up to LOOKAHEAD fetched pieces per partition wait for their writes: bounded memory, and
    // fetching overlaps writing. A write may so outlive the assignment that fetched it; the
    // shard fence refuses it then (its epoch moved), and its offsets are never committed.
    // kafkajs fetches again only once every batch of this fetch was handled: the wait holds all.
    const held = aggregatorFetchHeldSeconds.startTimer()
    while (state.inflight.length > LOOKAHEAD) await state.inflight.shift()
    held()
  }
}

/** A piece's write finished: its offsets are committed, in order, and counted. */
async function persist(c: ConsumerState, topic: string, partition: number, piece: Piece, bytes: number, written: Promise<PieceResult>, generation: Fetched) {
  const state = c.partitions.get(partition)
  if (!state) throw new Error(`partition ${partition} is no longer assigned to this consumer`)
  const result = await written
  if (result.takenOver) {
    throw new Error(`${result.takenOver} events of shards another writer took over; their offsets are its to commit`)
  }
  await c.hooks?.afterInsert?.({ partition, lastOffset: piece.last.toString(), events: result.events })
  if (state.next !== null && piece.first > state.next) {
    rewindOverGap(c, topic, partition, state, state.next, piece)
    return
  }
  // Fetched from a broker that has restarted empty since: its offsets mean nothing now.
  if (generation.restarts !== c.restarts) return
  await commit(c.consumer, topic, partition, piece, generation.name)
  c.hooks?.afterCommit?.({ partition, seq: generation.seq })
  state.next = piece.last + 1n
  c.onCommitted?.({ bytes })
  c.stats.batches++
  c.stats.events += result.events
  c.stats.meterRows += result.meterRows
  c.stats.duplicates += result.duplicates
  count(result)
  c.commitMetrics.committed(topic, partition, piece, result)
}

/**
 * A gap: the records before this piece were not written. A failure's replay is on its way,
 * or a seek was lost (one after a broker restart, while the consumer was down): read the
 * partition again from the last commit, once per gap, rather than wait for ever.
 */
function rewindOverGap(c: ConsumerState, topic: string, partition: number, state: PartitionState, next: bigint, piece: Piece): void {
  if (state.rewinding) return
  state.rewinding = true
  void rewind(c, topic, partition, new Error(`offsets ${next}..${piece.first - 1n} were not written`)).finally(() => {
    state.rewinding = false
  })
}

/** Re-read the partition from its last commit; the write stage makes the replay exact. */
async function rewind(c: ConsumerState, topic: string, partition: number, err: unknown) {
  if (c.stopping) return
  c.log(`batch on ${topic}[${partition}] failed; replaying from the last committed offset`, err)
  await new Promise((r) => setTimeout(r, 500))
  const next = c.partitions.get(partition)?.next
  if (next !== null && next !== undefined && !c.stopping) {
    try {
      c.consumer.seek({ topic, partition, offset: next.toString() })
    } catch (seekErr) {
      c.log(`seek on ${topic}[${partition}] failed`, seekErr)
    }
  }
}
