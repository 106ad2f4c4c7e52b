// The same statements, good and failing, sent to the embedded engine in this process and to the
// local endpoint over HTTP: the rows, the error codes and the error types must agree.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { ClickHouse } from '../client.js'
import { spawnEndpoint, type EndpointProcess } from './process.js'
import { testConfig } from '../../test/support/platform.js'

const config = testConfig()
const base = `${config.clickhouse.chdbPath}-differential`
let endpoint: EndpointProcess
let embedded: ClickHouse
let http: ClickHouse

before(async () => {
  rmSync(`${base}-a`, { recursive: true, force: true })
  rmSync(`${base}-b`, { recursive: true, force: true })
  endpoint = await spawnEndpoint({ CHDB_PATH: `${base}-b`, CLICKHOUSE_ENDPOINT_PORT: '0', CLICKHOUSE_USER: 'meterline', CLICKHOUSE_PASSWORD: 'secret' })
  embedded = ClickHouse.open({ ...config.clickhouse, chdbPath: `${base}-a`, database: 'diff' })
  http = ClickHouse.open({ ...config.clickhouse, url: endpoint.url, user: 'meterline', password: 'secret', database: 'diff' })
})
after(async () => {
  await Promise.allSettled([embedded?.close(), http?.close()])
  await endpoint?.stop()
})

const both = <T>(run: (ch: ClickHouse) => Promise<T>) => Promise.all([run(embedded), run(http)])

async function failure(ch: ClickHouse, run: (ch: ClickHouse) => Promise<unknown>): Promise<{ code: string; type: string }> {
  try {
    await run(ch)
  } catch (err) {
    const e = err as { code?: string; type?: string }
    return { code: String(e.code), type: String(e.type) }
  }
  assert.fail('the statement succeeded')
}

describe('the local ClickHouse endpoint against the embedded engine', () => {
  it('creates, inserts and reads the same rows, with typed parameters and settings', async () => {
    for (const ch of [embedded, http]) {
      await ch.command('CREATE DATABASE IF NOT EXISTS diff')
      await ch.command(`CREATE TABLE IF NOT EXISTS ${ch.table('t')} (id String, n UInt64, at DateTime64(3, 'UTC'), tags Array(String)) ENGINE = MergeTree ORDER BY id`)
    }
    const rows = [["a'\\\t1", 1, '2026-11-01 00:00:00.001', ['x', "y'z"]], ['b', 2, '2026-11-02 12:00:00.000', []], ['c', 3, '2026-11-03 00:00:00.000', ['\n']]]
    await both((ch) => ch.insertCompact('t', rows))
    await both((ch) => ch.insertOneBlock('t', [['d', 4, '2026-11-04 00:00:00.000', []]]))
    // Over 4 KiB of parameters: the client sends them as a multipart body.
    const ids = [...Array.from({ length: 800 }, (_, i) => `missing-${i}`), "a'\\\t1", 'c', 'd']
    const [a, b] = await both((ch) => ch.query(
      `SELECT id, toString(n) AS n, toString(at) AS at_text, tags FROM ${ch.table('t')} WHERE id IN {ids:Array(String)} AND at >= {from:DateTime64(3)} ORDER BY id`,
      { ids, from: '2026-11-01 00:00:00.001' }, { max_threads: '1' },
    ))
    assert.equal((a as unknown[]).length, 3)
    assert.deepEqual(b, a)
    const [ta, tb] = await both((ch) => ch.queryText(`SELECT id, n FROM ${ch.table('t')} ORDER BY id`))
    assert.equal(tb, ta)
  })

  it('keeps a statement\'s settings to that statement', async () => {
    const [[a1], [b1]] = await both((ch) => ch.query<{ m: string }>("SELECT getSetting('max_block_size') AS m", undefined, { max_block_size: '1234' }))
    const [[a2], [b2]] = await both((ch) => ch.query<{ m: string }>("SELECT getSetting('max_block_size') AS m"))
    assert.deepEqual([b1, b2], [a1, a2])
    assert.notEqual(String(a2.m), '1234')
  })

  it('fails the same way: syntax, unknown table, unknown setting, a parameter of the wrong type, bad rows', async () => {
    const cases: ((ch: ClickHouse) => Promise<unknown>)[] = [
      (ch) => ch.query('SELEC 1'),
      (ch) => ch.query('SELECT 1 FORMAT CSV'),
      (ch) => ch.query(`SELECT * FROM ${ch.table('no_such_table')}`),
      (ch) => ch.query('SELECT 1', undefined, { no_such_setting: '1' }),
      (ch) => ch.query('SELECT {n:UInt32} AS n', { n: 'not a number' }),
      (ch) => ch.command(`INSERT INTO ${ch.table('t')} SELECT 'e', toUInt64('x'), now64(3), []`),
      (ch) => ch.insertCompact('t', [['e', 'not a number', '2026-11-01 00:00:00.000', []]]),
    ]
    for (const [i, run] of cases.entries()) {
      const [a, b] = await Promise.all([failure(embedded, run), failure(http, run)])
      assert.deepEqual(b, a, `case ${i}`)
    }
    const [[ca], [cb]] = await both((ch) => ch.query<{ c: string }>(`SELECT toString(count()) AS c FROM ${ch.table('t')}`))
    assert.deepEqual(cb, ca)
    assert.equal(ca.c, '4', 'a failed insert leaves nothing behind')
  })

  it('refuses a wrong password as a server does', async () => {
    const stranger = ClickHouse.open({ ...config.clickhouse, url: endpoint.url, user: 'meterline', password: 'wrong', database: 'diff' })
    try {
      assert.deepEqual(await failure(stranger, (ch) => ch.query('SELECT 1')), { code: '516', type: 'AUTHENTICATION_FAILED' })
    } finally {
      await stranger.close()
    }
  })

  it('stores a block sent twice twice, in both modes (no insert deduplication anywhere)', async () => {
    for (const ch of [embedded, http]) await ch.command(`CREATE TABLE IF NOT EXISTS ${ch.table('twice')} (k UInt64) ENGINE = MergeTree ORDER BY k`)
    const block = [[1], [2], [3]]
    for (let i = 0; i < 2; i++) await both((ch) => ch.insertCompact('twice', block))
    const [[a], [b]] = await both((ch) => ch.query<{ c: string }>(`SELECT toString(count()) AS c FROM ${ch.table('twice')}`))
    assert.deepEqual([a.c, b.c], ['6', '6'])
  })
})
