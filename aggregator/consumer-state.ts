// What one aggregator consumer (consumer.ts) shares between its steps: the Kafka consumer, the
// write stage, and per partition the chain that commits pieces in order (partition-chain.ts),
// besides the broker restarts it saw (broker-restarts.ts). One object, passed to every step, so
// the state the steps share is named in one place.
import type { Admin, Consumer, Kafka } from 'kafkajs'
import type { GenerationWatch } from '../platform/broker-generation.js'
import type { CommitMetrics } from './commit-metrics.js'
import type { WriteStage } from './write-stage.js'

export type ConsumerLog = (msg: string, err?: unknown) => void

/** The consumer's own fault-injection points (the write stage's and backfills' are theirs). */
export interface BatchHooks {
  /** Called after the ClickHouse writes and before the offset commit (fault-injection point for tests). */
  afterInsert?: (info: { partition: number; lastOffset: string; events: number }) => Promise<void> | void
  /** Called as a fetched batch is handed over; `seq` numbers the batches this consumer handled */
  beforeBatch?: (info: { partition: number; fetchedOffset: string; seq: number }) => void
  /** Called after a batch's offsets were committed */
  afterCommit?: (info: { partition: number; seq: number }) => void
}

export interface ConsumerStats {
  batches: number
  events: number
  meterRows: number
  duplicates: number
}

export interface PartitionState {
  chain: Promise<void>
  next: bigint | null
  /** commits of fetched pieces not yet done, oldest first (the look-ahead) */
  inflight: Promise<void>[]
  /** a re-read from the last commit is under way */
  rewinding?: boolean
}

/** the broker generation a piece was fetched in */
export interface Fetched {
  restarts: number
  /** the batch's number (hooks) */
  seq: number
  /** the local broker's generation topic (null: a broker without one) */
  name: string | null
}

export interface ConsumerState {
  readonly kafka: Kafka
  readonly topic: string
  readonly groupId: string
  readonly hooks: BatchHooks | undefined
  /** told the record bytes each commit covers (all-in-one without the spool: the lag gate) */
  readonly onCommitted: ((committed: { bytes: number }) => void) | undefined
  readonly log: ConsumerLog
  readonly consumer: Consumer
  readonly stage: WriteStage
  readonly commitMetrics: CommitMetrics
  readonly stats: ConsumerStats
  readonly partitions: Map<number, PartitionState>
  /** partitions the group assigns to this consumer now */
  assignment: number[]
  stopping: boolean
  /** broker restarts seen (a piece fetched before one is not committed) */
  restarts: number
  batchSeq: number
  /**
   * The restarts seen when each broker node's fetch in progress began. kafkajs hands a fetch's
   * batches over before that node's next fetch starts, so a batch handed over now was fetched
   * under the oldest of these: one fetched before a restart the watch noticed since is tagged
   * with the count before it, whenever it is handed over (a broker seconds old returns batches
   * from offset 0, just like the re-read of the new one). A node that stopped fetching (gone
   * after a restart) is forgotten after a minute; a fetch's batches are handed over within
   * milliseconds of its answer.
   */
  readonly fetchStarts: Map<number, { restarts: number; at: number }>
  /** the broker's generation watch (set once the consumer runs) */
  watch?: GenerationWatch
  /** asks the group's committed offsets (stale commits), made on first use */
  admin?: Admin
  /** the consumer's run in progress (it is started again after a failure) */
  running: Promise<void>
}
