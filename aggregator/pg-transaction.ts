// One Postgres transaction on a client of the aggregator's pool: committed when `fn` returns,
// rolled back when it throws; a client whose connection broke is not reused.
//
// Every transaction here holds a fence (a shard's epoch, a backfill's lease) across ClickHouse
// statements that Postgres does not see: the session's idle-in-transaction timeout would end it
// (and release the lock to a taker) while an insert is still on its way, so it is switched off
// for these transactions. A writer that is paused keeps its shards; one that dies closes its
// session and releases them.
import type pg from 'pg'

export async function transaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect()
  let broken = false
  try {
    await c.query('BEGIN; SET LOCAL idle_in_transaction_session_timeout = 0')
    const out = await fn(c)
    await c.query('COMMIT')
    return out
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {
      broken = true
    })
    throw err
  } finally {
    c.release(broken)
  }
}
