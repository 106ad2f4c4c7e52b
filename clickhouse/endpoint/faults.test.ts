// The endpoint's faults as a client meets them: an exception after the status line, a reset
// after the statement committed, and a statement that starts after its client gave up, whose
// KILL QUERY ... SYNC answers only once it has ended.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { ClickHouse } from '../client.js'
import { spawnEndpoint, type EndpointProcess } from './process.js'
import { testConfig } from '../../test/support/platform.js'

const config = testConfig()
const path = `${config.clickhouse.chdbPath}-endpoint-faults`
let endpoint: EndpointProcess
let ch: ClickHouse

const faults = async (rules: unknown[]) => {
  const res = await fetch(`${endpoint.url}/__faults`, { method: 'POST', body: JSON.stringify(rules) })
  assert.equal(res.status, 200)
  return (await res.json()) as { injected: Record<string, number> }
}
const count = async () => Number((await ch.query<{ c: string }>(`SELECT toString(count()) AS c FROM ${ch.table('f')}`))[0].c)

before(async () => {
  rmSync(path, { recursive: true, force: true })
  endpoint = await spawnEndpoint({ CHDB_PATH: path, CLICKHOUSE_ENDPOINT_PORT: '0', CLICKHOUSE_ENDPOINT_FAULTS: 'true', CLICKHOUSE_USER: '', CLICKHOUSE_PASSWORD: '' })
  ch = ClickHouse.open({ ...config.clickhouse, url: endpoint.url, user: undefined, password: undefined, database: 'faults', requestTimeoutMs: 1500 })
  await ch.command('CREATE DATABASE IF NOT EXISTS faults')
  await ch.command(`CREATE TABLE ${ch.table('f')} (k UInt64) ENGINE = MergeTree ORDER BY k`)
})
after(async () => {
  await ch?.close()
  await endpoint?.stop()
})

describe('faults of the local ClickHouse endpoint', () => {
  it('an exception after some rows under status 200 reaches the caller as the server\'s error', async () => {
    await faults([{ kind: 'error_mid_stream', match: 'numbers', count: 1 }])
    await assert.rejects(ch.query('SELECT number FROM numbers(1000)'), (err: { code?: string; type?: string }) => err.code === '241' && err.type === 'MEMORY_LIMIT_EXCEEDED')
    assert.equal((await ch.query('SELECT number FROM numbers(1000)')).length, 1000, 'the next statement is whole')
  })

  it('a reset after the insert committed: the caller sees a failure, the rows are stored', async () => {
    await faults([{ kind: 'reset_after_commit', match: 'insert into', count: 1 }])
    await assert.rejects(ch.insertCompact('f', [[1], [2], [3]]))
    assert.equal(await count(), 3)
  })

  it('an insert that starts after its client timed out: KILL QUERY ... SYNC returns once it has ended', async () => {
    await faults([{ kind: 'stall_before_run', match: 'insert into', count: 1, ms: 3000 }])
    const before = await count()
    await assert.rejects(ch.insertCompact('f', [[4], [5]], undefined, 'stalled-insert'))
    assert.equal(await count(), before, 'not yet run when the client gave up')
    await ch.settle('stalled-insert')
    assert.equal(await count(), before + 2, 'settle returned after the insert landed')
  })
})
