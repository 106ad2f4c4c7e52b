// Faults on the platform started the way `npm run up` starts it (scripts/up.sh, its own
// Postgres, Redis and in-memory broker): the app killed with kill -9 mid-burst, the broker
// killed and restarted mid-burst, `npm run down` mid-burst and `npm run up` again. Each
// scenario sends a known number of events with unique ids, resending a request until it got
// its 202, and checks that the usage API counts exactly that many, then audits the buckets
// against the raw events (usage:verify). The figures are printed for the record.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createLocalStack, type LocalStack } from '../support/local-stack.js'
import { startBurst, until, type Burst } from '../support/burst.js'

const TOTAL = Number(process.env.FAULT_EVENTS ?? 40_000)
let stack: LocalStack
let key: string
let tenantId: string

before(async () => {
  stack = createLocalStack()
  const { ms } = await stack.up()
  console.log(`[faults] first npm run up (initdb, migrations): ${ms} ms`)
  ;({ apiKey: key, tenantId } = stack.demo())
})
after(async () => {
  await stack?.destroy()
})

test('a clean start logs no error (the write publisher waits for Redis instead of failing before it is connected)', async () => {
  await new Promise((r) => setTimeout(r, 3000)) // heartbeats and the first writes of the demo tenant's start
  // our loggers' error levels (50, 60) and kafkajs' ("ERROR")
  const errors = stack.log().split('\n').filter((l) => /"level":(50|60|"ERROR")[,}]/.test(l))
  assert.deepEqual(errors, [], 'error lines in the log of a clean npm run up')
})

async function api(path: string, body: unknown) {
  const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) })
  return { status: res.status, body: await res.json() }
}

async function countMeter(name: string): Promise<string> {
  const m = await api('/v1/meters', { name, event_name: name, aggregation: { type: 'COUNT' } })
  assert.equal(m.status, 201, JSON.stringify(m.body))
  return m.body.id
}

async function counted(meterId: string): Promise<number> {
  const u = await api(`/v1/meters/${meterId}/usage`, { start_time: '2000-01-01T00:00:00Z', end_time: '2100-01-01T00:00:00Z' })
  return u.status === 200 ? Number(u.body.event_count ?? 0) : -1
}

/**
 * Waits until the count reaches TOTAL (or passes it: counted twice), at most 180 s, then re-reads
 * it. No shorter wait on a count that stopped moving: after a restart under load the aggregators
 * have taken over a minute to hold their partitions again, with the count standing still meanwhile.
 */
async function settle(meterId: string): Promise<{ count: number; ms: number }> {
  const t0 = Date.now()
  for (;;) {
    const c = await counted(meterId).catch(() => -1)
    if (c >= TOTAL || Date.now() - t0 > 180_000) break
    await new Promise((r) => setTimeout(r, 250))
  }
  const ms = Date.now() - t0
  await new Promise((r) => setTimeout(r, 1500))
  return { count: await counted(meterId), ms }
}

/** The spool's resend counters of the running platform (Prometheus text at /metrics). */
async function replayed(): Promise<string> {
  const text = await (await fetch(`${stack.url}/platform/metrics`)).text() // every process: the spool is in ingest
  const lines = text.split('\n').filter((l) => l.startsWith('meterline_spool_replayed_batches_total{'))
  return lines.map((l) => l.replace('meterline_spool_replayed_batches_total', 'replayed')).join(', ') || 'replayed: none'
}

async function ensureUp() {
  if (stack.appPid() === undefined) {
    const { ms } = await stack.up()
    console.log(`[faults] npm run up after a graceful stop: ${ms} ms to a serving API`)
  }
}

/** Stops the app (chDB binds its directory to one process) and runs usage:verify. */
function audit(name: string) {
  return async () => {
    await stack.stopApp()
    const r = stack.verify(tenantId)
    console.log(`[faults] ${name}: usage:verify exit ${r.status}: ${r.output.trim().split('\n').at(-1)}`)
    assert.equal(r.status, 0, r.output)
  }
}

function report(name: string, burst: Burst, count: number, extra: string) {
  console.log(`[faults] ${name}: sent ${TOTAL}, acknowledged ${burst.acknowledged}, counted ${count}; ${burst.retried} requests resent; ${extra}`)
}

test('kill -9 of the platform mid-burst: the stack keeps running, a restart serves quickly, every acknowledged event counts once', async () => {
  await ensureUp()
  const meterId = await countMeter('kill9')
  const burst = startBurst({ url: stack.url, apiKey: key, eventName: 'kill9', total: TOTAL, idPrefix: 'kill9' })
  await until(() => burst.acknowledged >= TOTAL / 3, 'a third of the burst acknowledged')
  const atKill = burst.acknowledged
  await stack.killApp()
  const status = stack.status()
  assert.match(status, /postgres: running/)
  assert.match(status, /redis: running/)
  assert.match(status, /kafka: running/)
  const restart = await stack.up()
  await burst.done
  const { count, ms } = await settle(meterId)
  report('kill -9 app', burst, count, `${atKill} acknowledged before the kill; restart to a serving API ${restart.ms} ms; counted ${ms} ms after the burst; ${await replayed()}`)
  assert.equal(burst.acknowledged, TOTAL)
  assert.equal(count, TOTAL)
  await audit('kill -9 app')()
})

test('the broker killed and restarted mid-burst: clients reconnect to the same port and the spool resends what it lost', async () => {
  await ensureUp()
  const meterId = await countMeter('broker')
  const burst = startBurst({ url: stack.url, apiKey: key, eventName: 'broker', total: TOTAL, idPrefix: 'broker' })
  await until(() => burst.acknowledged >= TOTAL / 3, 'a third of the burst acknowledged')
  const atKill = burst.acknowledged
  const t0 = Date.now()
  await stack.restartBroker()
  const brokerMs = Date.now() - t0
  await burst.done
  const { count, ms } = await settle(meterId)
  report('broker restart', burst, count, `${atKill} acknowledged before the broker was killed; broker back in ${brokerMs} ms; counted ${ms} ms after the burst; ${await replayed()}`)
  assert.equal(burst.acknowledged, TOTAL)
  assert.equal(count, TOTAL)
  await audit('broker restart')()
})

test('npm run down mid-burst, then npm run up: the drain or the spool replay loses nothing', async () => {
  await ensureUp()
  const meterId = await countMeter('down')
  const burst = startBurst({ url: stack.url, apiKey: key, eventName: 'down', total: TOTAL, idPrefix: 'down' })
  await until(() => burst.acknowledged >= TOTAL / 3, 'a third of the burst acknowledged')
  const atDown = burst.acknowledged
  const down = await stack.down()
  assert.doesNotMatch(stack.status(), /running/)
  const second = await stack.down()
  const up = await stack.up()
  await burst.done
  const { count, ms } = await settle(meterId)
  const drained = down.output.split('\n').find((l) => l.includes('stopped in')) ?? '(no stop summary)'
  report('npm run down + up', burst, count, `${atDown} acknowledged before down; down took ${down.ms} ms (${drained.trim()}); a second down ${second.ms} ms; up ${up.ms} ms; counted ${ms} ms after the burst; ${await replayed()}`)
  assert.equal(burst.acknowledged, TOTAL)
  assert.equal(count, TOTAL)
  await audit('npm run down + up')()
})

test('npm run down while npm run up is still starting stops everything, and up works again', async () => {
  await stack.up({ wait: false })
  await new Promise((r) => setTimeout(r, 300))
  const down = await stack.down()
  assert.doesNotMatch(stack.status(), /running/, down.output)
  assert.equal(stack.appPid(), undefined)
  const up = await stack.up()
  console.log(`[faults] down during up: down ${down.ms} ms, everything stopped; up again ${up.ms} ms`)
  const res = await fetch(`${stack.url}/health`)
  assert.equal(res.status, 200)
})
