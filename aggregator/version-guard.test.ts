import { test } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { checkWritePathVersion, WritePathVersionError } from './version-guard.js'

const url = process.env.DATABASE_URL!

test('missing write-path tables are a version refusal; an unreachable Postgres is not (the start-up waits for it)', async () => {
  // A database without the migrations: the guard refuses, with the reason.
  const bare = new pg.Pool({ connectionString: url.replace(/\/[^/]*$/, '/postgres'), max: 1 })
  try {
    await assert.rejects(checkWritePathVersion(bare), (err) => err instanceof WritePathVersionError && /tables are missing/.test(err.message))
  } finally {
    await bare.end()
  }
  // Nothing listening: a plain connection error, which openWriter retries instead of exiting.
  const gone = new pg.Pool({ connectionString: url.replace(/:\d+\//, ':1/'), max: 1, connectionTimeoutMillis: 500 })
  try {
    await assert.rejects(checkWritePathVersion(gone), (err) => !(err instanceof WritePathVersionError))
  } finally {
    await gone.end()
  }
  // The migrated database passes.
  const migrated = new pg.Pool({ connectionString: url, max: 1 })
  try {
    await checkWritePathVersion(migrated)
  } finally {
    await migrated.end()
  }
})
