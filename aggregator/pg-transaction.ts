// One Postgres transaction on a client of the aggregator's pool: committed when `fn` returns,
// rolled back when it throws; a client whose connection broke is not reused.
import type pg from 'pg'

export async function transaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect()
  let broken = false
  try {
    await c.query('BEGIN')
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
