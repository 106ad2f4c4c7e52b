// A writer: the write stage with its shard table, fence and backfills, wired once. The Kafka
// consumer (consumer.ts) runs one per group member; tests and benchmarks run one that holds
// every shard and is fed pieces directly.
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type pg from 'pg'
import type { ClickHouse } from '../clickhouse/client.js'
import { storeId } from '../clickhouse/queries/write-store.js'
import { retryingFor } from '../platform/retry.js'
import type { CommittedWriteListener } from '../schemas/committed-write.js'
import type { MeterSource } from '../schemas/meters.js'
import { SHARDS } from '../schemas/shards.js'
import { Backfills, type BackfillHooks } from './backfill.js'
import { importLegacyActivations } from './legacy-activations.js'
import { MeterCache } from './meter-cache.js'
import { ShardFence } from './shard-fence.js'
import { ShardTable } from './shard-table.js'
import { checkWritePathVersion, WritePathVersionError } from './version-guard.js'
import { WriteStage, type Reroute, type WriteStageHooks } from './write-stage.js'

export interface WriterOptions {
  ch: ClickHouse
  pg: pg.Pool
  meters: MeterSource
  meterRefreshMs?: number
  hooks?: WriteStageHooks & BackfillHooks
  reroute?: Reroute
  /** partitions of the events topic (a consumer's writer); unset for a standalone writer */
  partitions?: number
  onCommittedWrite?: CommittedWriteListener
  /** a name for this writer in logs and the fence (default: host, pid and a random suffix) */
  name?: string
  maxEvents?: number
  /** days of event time whose keys are kept (the ingest acceptance window plus a margin); 0: every key, forever */
  dedupHorizonDays?: number
  /** keys read per statement when a shard is taken over (tests use small pages) */
  keyPageSize?: number
  /** minutes of event time whose dedup keys stay in memory (older events are looked up in dedup_events); default 30 */
  hotWindowMinutes?: number
  /** the writer's clock (tests step it) */
  clock?: () => number
  log?: (msg: string, err?: unknown) => void
}

export interface Writer {
  name: string
  /** the ClickHouse database's identity (the fence's records are kept per database) */
  store: string
  meters: MeterCache
  stage: WriteStage
  shards: ShardTable
  backfills: Backfills
}

export async function openWriter(opts: WriterOptions): Promise<Writer> {
  const log = opts.log ?? ((msg: string, err?: unknown) => console.error(`[aggregator] ${msg}`, err ?? ''))
  const name = opts.name ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  // Postgres may be restarting or slow to answer while the process starts: wait for it (up to a
  // few minutes) rather than exit; a version refusal is final.
  const store = await retryingFor(async () => {
    await checkWritePathVersion(opts.pg)
    const id = await storeId(opts.ch)
    await ShardFence.register(opts.pg, id)
    await importLegacyActivations(opts.ch, opts.pg, id, log)
    return id
  }, {
    forMs: 180_000,
    final: (err) => err instanceof WritePathVersionError,
    onRetry: (err, wait) => log(`the aggregator's start-up could not reach Postgres or ClickHouse; trying again in ${wait} ms`, err),
  })
  const fence = new ShardFence(opts.pg, store, name)
  const shards = new ShardTable(opts.ch, fence, log, opts.dedupHorizonDays ?? 0, opts.keyPageSize, (opts.hotWindowMinutes ?? 30) * 60_000, opts.clock)
  const cache = new MeterCache(opts.meters, opts.meterRefreshMs ?? 500)
  const stage = new WriteStage(opts.ch, shards, cache, {
    hooks: opts.hooks, log, reroute: opts.reroute, partitions: opts.partitions, onCommittedWrite: opts.onCommittedWrite, maxEvents: opts.maxEvents,
  })
  const backfills = new Backfills(opts.ch, opts.pg, store, name, cache, log, opts.hooks)
  return { name, store, meters: cache, stage, shards, backfills }
}

/** A writer holding every shard, fed directly (tests, benchmarks, tools): no consumer group. */
export async function openStandaloneWriter(opts: WriterOptions): Promise<Writer> {
  const writer = await openWriter(opts)
  writer.shards.assign(Array.from({ length: SHARDS }, (_, s) => s))
  await writer.stage.tick()
  return writer
}

/** Runs backfills until none of the given meters waits (tests, benchmarks). */
export async function settleBackfills(writer: Writer, meterIds: string[], timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs
  for (;;) {
    await writer.stage.tick()
    await writer.backfills.tick()
    const left = await writer.backfills.pending(meterIds)
    if (left.length === 0) return
    if (Date.now() > until) throw new Error(`backfills of ${left.join(', ')} did not finish within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
