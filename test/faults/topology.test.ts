// The production topology as `npm run up` runs it (PLATFORM_TOPOLOGY=processes): the local
// ClickHouse endpoint, ingest, two aggregators, billing-api and the scheduler, each its own
// process, every role reaching ClickHouse over HTTP. Faults across processes; after each, every
// accepted event is counted exactly once.
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readTopology } from '../../platform/topology-file.js'
import { createLocalStack } from '../support/local-stack.js'
import { EventLoad } from '../support/event-load.js'
import { launchChromium } from '../support/browser.js'

const stack = createLocalStack({
  PLATFORM_TOPOLOGY: 'processes', TOPOLOGY_AGGREGATORS: '2', AGGREGATOR_CONSUMERS: '1',
  CLICKHOUSE_ENDPOINT_FAULTS: 'true', CLICKHOUSE_REQUEST_TIMEOUT_MS: '4000', SHUTDOWN_DRAIN_MS: '5000',
})
const port = Number(stack.env.PORT)
const ingestUrl = `http://127.0.0.1:${port + 1}`
const endpointUrl = `http://127.0.0.1:${stack.env.CLICKHOUSE_ENDPOINT_PORT}`
let key = ''

const processes = () => readTopology(stack.dataDir) ?? []
const processOf = (name: string) => {
  const p = processes().find((q) => q.name === name)
  assert.ok(p?.pid, `${name} has no pid in topology.json`)
  return { ...p, pid: p.pid }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${stack.url}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  const json = (await res.json()) as T
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

const CUSTOMERS = 5

async function counted(meterId: string): Promise<number> {
  let total = 0
  for (let c = 0; c < CUSTOMERS; c++) {
    const u = await api<{ value: string }>('POST', `/v1/meters/${meterId}/usage`, { external_customer_id: `c-${c}`, start_time: '2020-01-01T00:00:00Z', end_time: '2100-01-01T00:00:00Z' })
    total += Number(u.value)
  }
  return total
}

/** Streams events while `fault` runs, then waits until every accepted event is counted, and checks nothing more is. */
async function exactThrough(fault: () => Promise<void>): Promise<{ accepted: number; retries: number }> {
  const eventName = `topology_${Date.now()}_${Math.random().toString(36).slice(2, 6)}`
  const meter = await api<{ id: string }>('POST', '/v1/meters', { name: eventName, event_name: eventName, aggregation: { type: 'COUNT' } })
  const load = new EventLoad({ ingestUrl, apiKey: key, eventName, customers: CUSTOMERS, batchSize: 100, everyMs: 100 })
  load.start()
  await sleep(3000)
  await fault()
  await sleep(3000)
  await load.stop()
  const accepted = load.accepted.size
  assert.ok(accepted >= 2000, `only ${accepted} events accepted`)
  let total = -1
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(500)) {
    total = await counted(meter.id).catch(() => -1)
    if (total >= accepted) break
  }
  await sleep(2000)
  assert.equal(await counted(meter.id), accepted, `counted ${total} of ${accepted} accepted events`)
  return { accepted, retries: load.retries }
}

async function faults(rules: unknown[]): Promise<{ injected: Record<string, number>; pending: unknown[] }> {
  const res = await fetch(`${endpointUrl}/__faults`, { method: 'POST', body: JSON.stringify(rules) })
  assert.equal(res.status, 200)
  return (await res.json()) as { injected: Record<string, number>; pending: unknown[] }
}

async function restartedAfter(name: string, restarts: number): Promise<void> {
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; await sleep(200)) {
    const p = processOf(name)
    if (p.restarts > restarts && p.state === 'running') return
  }
  assert.fail(`${name} was not restarted`)
}

before(async () => {
  await stack.up()
  key = stack.demo().apiKey
  // billing-api answers before the scheduler, the last role, has started
  for (const deadline = Date.now() + 60_000; processes().length < 6 || processes().some((p) => p.state !== 'running'); await sleep(200)) {
    if (Date.now() > deadline) assert.fail(`the topology did not start: ${JSON.stringify(processes())}`)
  }
})
after(() => stack.destroy())

describe('the production topology, one process per role over HTTP', () => {
  it('runs the endpoint, ingest, two aggregators, billing-api and the scheduler as separate processes', async () => {
    const ps = processes()
    assert.deepEqual(ps.map((p) => p.name), ['clickhouse-endpoint', 'ingest', 'aggregator-1', 'aggregator-2', 'billing-api', 'scheduler'])
    assert.equal(new Set(ps.map((p) => p.pid)).size, 6)
    for (const p of ps) assert.equal(p.state, 'running', p.name)
    for (const p of ps.filter((p) => p.name !== 'clickhouse-endpoint')) assert.equal((await fetch(`http://127.0.0.1:${p.port}/health`)).status, 200, p.name)
    // The console's health page reads these: every process, and every process's metrics in one text.
    const listed = (await (await fetch(`${stack.url}/platform/processes`)).json()) as { items: { name: string; healthy: boolean }[] }
    assert.deepEqual(listed.items.map((p) => [p.name, p.healthy]), ps.map((p) => [p.name, true]))
    const metrics = await (await fetch(`${stack.url}/platform/metrics`)).text()
    assert.match(metrics, /meterline_aggregator_consumer_lag/, 'the aggregators\' series')
    assert.match(metrics, /meterline_ingest/, 'ingest\'s series')
    // The local Prometheus finds the roles here: each one's /metrics, its role the job.
    const targets = JSON.parse(readFileSync(join(stack.dataDir, 'prometheus-targets.json'), 'utf8')) as { targets: string[]; labels: { role: string } }[]
    assert.deepEqual(targets.map((t) => [t.targets[0], t.labels.role]), ps.filter((p) => p.kind !== 'clickhouse-endpoint').map((p) => [`127.0.0.1:${p.port}`, p.kind]))
  })

  it('billing-api passes the event routes on to ingest: one base URL for the whole API, ingest\'s answers unchanged', async () => {
    const post = async (path: string, body: unknown, apiKey = key) => {
      const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      return { status: res.status, body: (await res.json()) as Record<string, unknown> }
    }
    const one = await post('/v1/events', { event_id: `fwd-${Date.now()}`, event_name: 'forwarded', external_customer_id: 'c1' })
    assert.equal(one.status, 202, JSON.stringify(one.body))
    assert.match(String(one.body.event_id), /^fwd-/)
    const bulk = await post('/v1/events/bulk', { events: [{ event_name: 'forwarded', external_customer_id: 'c1' }, { event_name: 'forwarded', external_customer_id: 'c2' }] })
    assert.deepEqual([bulk.status, bulk.body.count], [202, 2])
    const bad = await post('/v1/events/raw/bulk', { events: [{ external_customer_id: 'c1' }] })
    assert.deepEqual([bad.status, bad.body.http_status_code, typeof bad.body.code, typeof bad.body.message], [400, 400, 'string', 'string'])
    const unknownKey = await post('/v1/events', { event_name: 'forwarded', external_customer_id: 'c1' }, 'not-a-key')
    assert.deepEqual([unknownKey.status, unknownKey.body.http_status_code], [401, 401])
  })

  it('the console\'s health page shows every process and the live rates while events stream (docs/console/health.png)', async () => {
    const load = new EventLoad({ ingestUrl, apiKey: key, eventName: `console_${Date.now()}`, customers: CUSTOMERS, batchSize: 100, everyMs: 100 })
    const browser = await launchChromium()
    load.start()
    try {
      const page = await browser.context.newPage()
      await page.goto(`${stack.url}/console/`)
      await page.fill('[data-testid=api-key]', key)
      await page.click('[data-testid=sign-in]')
      await page.locator('header.top').waitFor()
      await page.goto(`${stack.url}/console/#/health`)
      // two readings 5 s apart give the rates; the freshness histogram needs a few counted events
      const rate = page.locator('[data-testid=ingest-rate]')
      await page.waitForFunction(() => /^\d/.test(document.querySelector('[data-testid=ingest-rate]')?.textContent ?? '')
        && /^≤ [\d.]+ s \/ ≤ [\d.]+ s$/.test(document.querySelector('[data-testid=freshness]')?.textContent ?? ''), undefined, { timeout: 60_000 })
      assert.ok(Number(await rate.textContent()) > 0, `ingest rate ${await rate.textContent()}`)
      const rows = await page.locator('[data-testid=processes] tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-testid')))
      assert.deepEqual(rows, processes().map((p) => `process-${p.name}`))
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 1280), 'fits 1280 px')
      await page.screenshot({ path: fileURLToPath(new URL('../../docs/console/health.png', import.meta.url)), fullPage: true })
    } finally {
      await load.stop()
      await browser.close()
    }
  })

  it('kill -9 of one aggregator while events stream: it is restarted, its shards taken over, every event counted once', async () => {
    const before = processOf('aggregator-1')
    await exactThrough(async () => {
      process.kill(before.pid, 'SIGKILL')
      await restartedAfter('aggregator-1', before.restarts)
    })
    assert.match(stack.log(), /aggregator-1 \(pid \d+\) exited \(signal SIGKILL\); starting it again/)
  })

  it('one aggregator stopped (SIGSTOP) past the group session and every fence, then continued: exact', async () => {
    const { pid } = processOf('aggregator-2')
    await exactThrough(async () => {
      process.kill(pid, 'SIGSTOP')
      await sleep(15_000)
      process.kill(pid, 'SIGCONT')
    })
  })

  it('the endpoint resets a stale keep-alive socket, resets after committing inserts, and runs one after its client timed out: exact', async () => {
    let state: { injected: Record<string, number> } = { injected: {} }
    await exactThrough(async () => {
      await faults([
        { kind: 'reset_reused_socket', match: 'insert into', count: 3 },
        { kind: 'reset_after_commit', match: 'insert into', count: 3 },
        { kind: 'stall_before_run', match: 'insert into', count: 1, ms: 6000 },
      ])
      await sleep(12_000)
      state = await faults([])
    })
    assert.ok(state.injected.reset_after_commit >= 1, JSON.stringify(state))
    assert.ok(state.injected.stall_before_run >= 1, JSON.stringify(state))
  })

  it('a third aggregator process asked for through the admin API while events stream, then sent away: exact', async () => {
    const token = readFileSync(join(stack.dataDir, 'admin-token'), 'utf8').trim()
    const setAggregators = async (consumers: number) => {
      const res = await fetch(`${stack.url}/v1/admin/aggregators`, {
        method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ consumers }),
      })
      assert.equal(res.status, 200, await res.clone().text())
      return ((await res.json()) as { items: { name: string; partitions: number[] }[] }).items
    }
    await exactThrough(async () => {
      const joined = await setAggregators(3)
      assert.equal(joined.length, 3, JSON.stringify(joined))
      assert.ok(processOf('aggregator-3').pid)
      await sleep(4000)
      const left = await setAggregators(2)
      assert.deepEqual(left.map((c) => c.partitions.length > 0), [true, true], JSON.stringify(left))
    })
    assert.equal(processes().filter((p) => p.kind === 'aggregator').length, 2)
  })

  it('the endpoint killed (kill -9) and restarted by the supervisor: nothing lost', async () => {
    const before = processOf('clickhouse-endpoint')
    await exactThrough(async () => {
      process.kill(before.pid, 'SIGKILL')
      await restartedAfter('clickhouse-endpoint', before.restarts)
    })
  })

  it('npm run down stops the roles in order, after the aggregators committed everything', async () => {
    const { output } = await stack.down()
    const log = stack.log()
    assert.match(log, /stopping ingest, then billing-api and the scheduler, then the aggregators, then the ClickHouse endpoint/)
    assert.match(log, /the aggregators had committed every event/)
    assert.ok(log.indexOf('[ingest] stopped') < log.indexOf('[aggregator-1] stopped'), output)
  })

  it('kill -9 of the supervisor: every role stops itself instead of living on without it', async () => {
    await stack.up()
    for (const deadline = Date.now() + 60_000; processes().length < 6 || processes().some((p) => p.state !== 'running'); await sleep(200)) {
      if (Date.now() > deadline) assert.fail('the topology did not start again')
    }
    const pids = processes().flatMap((p) => (p.pid === undefined ? [] : [p.pid]))
    await stack.killApp()
    const alive = () => pids.filter((pid) => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    })
    for (const deadline = Date.now() + 30_000; alive().length > 0 && Date.now() < deadline;) await sleep(200)
    assert.deepEqual(alive(), [], 'roles still running after their supervisor died')
  })
})
