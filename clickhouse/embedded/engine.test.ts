// The embedded engine runs statements with parameters as a server does: side by side on its
// connections, each with its own values, and a parameter a statement does not send is missing
// (never one an earlier statement on the same connection sent).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { Engine, type EngineStatement } from './engine.js'
import { testConfig } from '../../test/support/platform.js'

const path = `${testConfig().clickhouse.chdbPath}-engine-params`
let engine: Engine

before(() => {
  rmSync(path, { recursive: true, force: true })
  engine = new Engine(path, 4)
})
after(() => engine?.close())

const statement = (sql: string, params: Record<string, string> = {}): EngineStatement => ({ sql, params, settings: new Map(), format: 'TabSeparated' })
const text = async (sql: string, params?: Record<string, string>) => (await engine.run(statement(sql, params))).bytes.toString()

describe('the embedded engine and query parameters', () => {
  it('runs statements with parameters side by side: a quick one does not wait for a slow one', async () => {
    const order: string[] = []
    const slow = text('SELECT {x:String}, sleep(1.5)', { x: 'slow' }).then((v) => order.push(v.split('\t')[0]))
    await new Promise((r) => setTimeout(r, 100))
    const quick = text('SELECT {y:String}', { y: 'quick' }).then((v) => order.push(v.trim()))
    await Promise.all([slow, quick])
    assert.deepEqual(order, ['quick', 'slow'])
  })

  it('gives every statement its own values, many at once, in their text form', async () => {
    const values = Array.from({ length: 200 }, (_, i) => `v${i} it\\'s\\t`)
    const got = await Promise.all(values.map((v, i) => text('SELECT {s:String}, {n:UInt32} + 1, {a:Array(String)}', { s: v, n: String(i), a: `['${i}']` })))
    got.forEach((row, i) => assert.equal(row, `v${i} it\\'s\\t\t${i + 1}\t['${i}']\n`))
  })

  it('takes a parameter of any size, as over HTTP (not bounded by max_query_size), and leaves the setting as the statement had it', async () => {
    const big = `[${Array.from({ length: 100_000 }, (_, i) => `'customer-${i}-xxxxxxxx'`).join(',')}]`
    assert.ok(big.length > 2_000_000)
    assert.equal(await text('SELECT length({a:Array(String)})', { a: big }), '100000\n')
    const limit = await engine.run({ ...statement("SELECT getSetting('max_query_size'), length({a:Array(String)})", { a: big }), settings: new Map([['max_query_size', '300000']]) })
    assert.equal(limit.bytes.toString(), '300000\t100000\n')
  })

  it("fails a statement that names a parameter it does not send, even after another statement sent it on the same connection", async () => {
    const single = new Engine(path, 1)
    try {
      const run = (params: Record<string, string>) => single.run(statement('SELECT {x:String}', params))
      assert.equal((await run({ x: 'a' })).bytes.toString(), 'a\n')
      await assert.rejects(run({}), /Code: 456\..*\(UNKNOWN_QUERY_PARAMETER\)/)
    } finally {
      await single.close()
    }
  })
})
