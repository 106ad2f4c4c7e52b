// The watchdog's deadlines count time in which this process's event loop ran: a loop blocked by
// our own work cannot read Postgres's answer, and must not take a live Postgres for a hung one
// (under full ingest load that closed the aggregator's connections mid-write).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { loadConfig } from './config.js'
import { loopTime, PostgresWatchdog } from './postgres-watchdog.js'

const config = loadConfig(process.env)
const block = (ms: number) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    // busy: this process's own synchronous work
  }
}

test('loopTime: a blocked stretch counts as at most two steps', async () => {
  const started = Date.now()
  const deadline = loopTime(200)
  block(600)
  const afterBlock = Date.now()
  await deadline.elapsed
  assert.ok(Date.now() - afterBlock >= 100, `resolved ${Date.now() - afterBlock} ms after a 600 ms block: the block counted as time`)
  assert.ok(Date.now() - started >= 600)
})

test('a live Postgres whose answers wait behind a blocked event loop is not declared hung', async () => {
  const logs: string[] = []
  const watchdog = new PostgresWatchdog(config.databaseUrl, { noAnswerMs: 100, probeTimeoutMs: 150 }, (m) => logs.push(m))
  try {
    // A probe begins, and this process's own work holds the loop far past the probe's deadline.
    const probe = watchdog['probe']()
    block(600)
    assert.equal(await probe, true, 'Postgres answered; the loop was busy')
    // The watchdog's own round: a query unanswered past noAnswerMs while the loop is blocked.
    const client = new pg.Client({ connectionString: config.databaseUrl })
    await client.connect()
    watchdog.guard(client)
    try {
      const slow = client.query('SELECT pg_sleep(0.3)')
      for (let i = 0; i < 4; i++) {
        await new Promise((r) => setTimeout(r, 30))
        block(400)
      }
      await slow
      await new Promise((r) => setTimeout(r, 400)) // a probe still running settles
      assert.equal(watchdog.health, 'answering', logs.join('; '))
      assert.equal((await client.query('SELECT 1 AS n')).rows[0].n, 1)
    } finally {
      await client.end()
    }
  } finally {
    watchdog.stop()
  }
})
