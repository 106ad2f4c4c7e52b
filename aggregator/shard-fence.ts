// One writer per shard at a time, fenced in Postgres (aggregator/postgres/0001_write_path.sql).
// A write holds its shards' rows FOR SHARE from its first check to its last side effect; a
// taker's claim (FOR UPDATE, epoch + 1) waits for that write and then moves the epoch, so a
// writer that lost its shards (a paused consumer, a zombie) is refused at its next write.
// kafkajs fences only the offset commit; this fence covers the ClickHouse writes too.
import pg from 'pg'
import { DEFAULT_POSTGRES_DEADLINES, sessionDeadlines, type PostgresDeadlines, type PostgresWatchdog } from '../platform/postgres-watchdog.js'
import { SHARDS } from '../schemas/shards.js'
import { transaction } from './pg-transaction.js'

export class FencedError extends Error {
  constructor(readonly shards: number[]) {
    super(`shards ${shards.join(', ')} are owned by another writer now (their epoch moved); this write is refused`)
  }
}

export interface Claim {
  shard: number
  epoch: bigint
  /** the owner and epoch before this claim: the same writer with the same epoch kept its state */
  previousOwner: string
  previousEpoch: bigint
  /** the last write whose dedup keys are written */
  doneEpoch: bigint
  doneSeq: bigint
}

export interface WriteId {
  shard: number
  epoch: bigint
  seq: bigint
}

export interface Cut {
  meterId: string
  shard: number
  epoch: bigint
  seq: bigint
}

export type Sql = Pick<pg.PoolClient, 'query'>

export class ShardFence {
  constructor(
    private readonly pool: pg.Pool,
    /** the ClickHouse database written (storeId): shards of different databases are independent */
    readonly store: string,
    readonly owner: string,
    private readonly claimWaitMs = 10_000,
  ) {}

  /** The store's rows exist (idempotent; run once at start). */
  static async register(pool: pg.Pool, store: string): Promise<void> {
    await pool.query('INSERT INTO write_path_stores (store) VALUES ($1) ON CONFLICT DO NOTHING', [store])
    await pool.query(
      `INSERT INTO shard_owner (store, shard) SELECT $1, g FROM generate_series(0, ${SHARDS - 1}) AS g ON CONFLICT DO NOTHING`, [store],
    )
  }

  /** Statement deadlines as every Postgres connection has them; the watchdog closes connections a hung Postgres leaves unanswered. */
  static pool(databaseUrl: string, max = 4, deadlines: Partial<PostgresDeadlines> = {}, watchdog?: PostgresWatchdog): pg.Pool {
    const d = { ...DEFAULT_POSTGRES_DEADLINES, connectTimeoutMs: 2000, ...deadlines }
    const pool = new pg.Pool({ connectionString: databaseUrl, max, ...sessionDeadlines(d), idleTimeoutMillis: 5000, allowExitOnIdle: true })
    if (watchdog) pool.on('connect', (client) => watchdog.guard(client))
    // A connection that dies (Postgres stopped or restarted) must not crash the process: idle
    // ones report on the pool, checked-out ones on the client (the query in flight fails).
    pool.on('error', () => undefined)
    pool.on('connect', (client) => client.on('error', () => undefined))
    return pool
  }

  /** Takes the shards: waits for a write in flight on them, then moves their epoch. */
  async claim(shards: number[]): Promise<Claim[]> {
    if (shards.length === 0) return []
    return this.tx(async (c) => {
      await c.query(`SET LOCAL lock_timeout = '${this.claimWaitMs}ms'`)
      const { rows } = await c.query<{ shard: number; epoch: string; old_epoch: string; old_owner: string; done_epoch: string; done_seq: string }>(
        `UPDATE shard_owner s SET epoch = s.epoch + 1, owner = $2, claimed_at = now()
           FROM (SELECT shard, epoch AS old_epoch, owner AS old_owner FROM shard_owner WHERE store = $3 AND shard = ANY($1) ORDER BY shard FOR UPDATE) o
          WHERE s.store = $3 AND s.shard = o.shard
          RETURNING s.shard, s.epoch::text, o.old_epoch::text, o.old_owner, s.done_epoch::text, s.done_seq::text`,
        [shards, this.owner, this.store],
      )
      return rows.map((r) => ({
        shard: r.shard, epoch: BigInt(r.epoch), previousOwner: r.old_owner, previousEpoch: BigInt(r.old_epoch),
        doneEpoch: BigInt(r.done_epoch), doneSeq: BigInt(r.done_seq),
      }))
    })
  }

  /**
   * Runs `fn` while holding the shards at the given epochs (FOR SHARE until it returns).
   * Throws FencedError, without running `fn`, when any of them moved.
   */
  async hold<T>(epochs: Map<number, bigint>, fn: (sql: Sql) => Promise<T>): Promise<T> {
    const shards = [...epochs.keys()].sort((a, b) => a - b)
    return this.tx(async (c) => {
      const { rows } = await c.query<{ shard: number; epoch: string }>(
        'SELECT shard, epoch::text FROM shard_owner WHERE store = $2 AND shard = ANY($1) ORDER BY shard FOR SHARE', [shards, this.store],
      )
      const moved = shards.filter((s) => rows.find((r) => r.shard === s)?.epoch !== epochs.get(s)!.toString())
      if (moved.length) throw new FencedError(moved)
      return fn(c)
    })
  }

  /** Inside `hold`: the shard's writes up to `seq` of `epoch` have their dedup keys written. */
  async markDone(sql: Sql, done: WriteId[]): Promise<void> {
    if (done.length === 0) return
    await sql.query(
      `UPDATE shard_owner s SET done_epoch = d.epoch, done_seq = d.seq
         FROM unnest($1::int[], $2::bigint[], $3::bigint[]) AS d(shard, epoch, seq)
        WHERE s.store = $4 AND s.shard = d.shard AND (s.done_epoch, s.done_seq) < (d.epoch, d.seq)`,
      [done.map((d) => d.shard), done.map((d) => d.epoch.toString()), done.map((d) => d.seq.toString()), this.store],
    )
  }

  /** Cuts of the given shards: meter -> shard -> first write that counts it. */
  async cuts(shards: number[]): Promise<Cut[]> {
    const { rows } = await this.pool.query<{ meter_id: string; shard: number; epoch: string; seq: string }>(
      'SELECT meter_id, shard, epoch::text, seq::text FROM meter_cuts WHERE store = $2 AND shard = ANY($1)', [shards, this.store],
    )
    return rows.map((r) => ({ meterId: r.meter_id, shard: r.shard, epoch: BigInt(r.epoch), seq: BigInt(r.seq) }))
  }

  /** Inside `hold`: records cuts (a cut already there stays: it was recorded by an earlier owner). */
  async recordCuts(sql: Sql, cuts: Cut[]): Promise<void> {
    if (cuts.length === 0) return
    await sql.query(
      `INSERT INTO meter_cuts (store, meter_id, shard, epoch, seq)
       SELECT $5, * FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[]) ON CONFLICT DO NOTHING`,
      [cuts.map((c) => c.meterId), cuts.map((c) => c.shard), cuts.map((c) => c.epoch.toString()), cuts.map((c) => c.seq.toString()), this.store],
    )
  }

  private tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return transaction(this.pool, fn)
  }

}
