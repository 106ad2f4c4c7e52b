// Named aggregator steps per Kafka batch of one partition, as ingest's are (ingest/pipeline.ts):
// decode (Avro records -> a piece of the partition's stream) -> write (the write stage: fence, dedup,
// buckets and markers, keys; write-stage.ts) -> commit (the offsets, only after
// everything was written) -> count (metrics). A crash between write and commit replays the
// piece, and the write stage makes the replay exact.
import type { Batch, Consumer } from 'kafkajs'
import {
  aggregatorDuplicateEvents, aggregatorEventsConsumed, aggregatorEventsSkipped, aggregatorMeterRowsWritten,
} from '../platform/metrics.js'
import { decodeBatch } from '../schemas/events.js'
import type { Piece, PieceResult, WriteStage } from './write-stage.js'

export interface DecodedPiece {
  piece: Piece
  /** record bytes the piece covers (all-in-one without the spool: the lag gate) */
  bytes: number
}

export function decode(groupId: string, batch: Batch): DecodedPiece {
  const messages = batch.messages.filter((m) => m.value)
  return {
    piece: {
      stream: `${groupId}/${batch.topic}/${batch.partition}`,
      partition: batch.partition,
      first: BigInt(batch.firstOffset() ?? batch.messages[0].offset),
      last: BigInt(batch.lastOffset()),
      records: messages.map((m) => ({ offset: BigInt(m.offset), batch: decodeBatch(m.value!), producedMs: Number(m.timestamp) })),
      fetchedMs: Date.now(),
    },
    bytes: messages.reduce((n, m) => n + m.value!.length, 0),
  }
}

export const write = (stage: WriteStage, piece: Piece): Promise<PieceResult> => stage.add(piece)

/**
 * The offsets, with the broker generation the piece was fetched in as their metadata: the spool
 * releases only what commits of the current generation passed (a piece of an emptied broker,
 * committed to its successor, names the old one).
 */
export async function commit(consumer: Consumer, topic: string, partition: number, piece: Piece, generation: string | null): Promise<void> {
  await consumer.commitOffsets([{ topic, partition, offset: (piece.last + 1n).toString(), metadata: generation }])
}

export function count(result: PieceResult): void {
  aggregatorEventsConsumed.inc(result.events)
  aggregatorMeterRowsWritten.inc(result.meterRows)
  aggregatorDuplicateEvents.inc(result.duplicates)
  for (const [reason, n] of Object.entries(result.skipped)) aggregatorEventsSkipped.inc({ reason }, n)
}
