// The delivery gate against the real Redis: per-endpoint and per-tenant caps, parking and
// waking, expired leases, and the circuit (open after N consecutive failures, one half-open
// probe after the cool-down, closed by its success).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { createRedis } from '../../platform/redis.js'
import { testConfig } from '../../test/support/platform.js'
import { DeliveryGate, type GateLimits, type GateTarget } from './delivery-gate.js'

let redis: Redis
const prefix = `mltest-gate-${randomBytes(3).toString('hex')}`
before(() => {
  redis = createRedis(testConfig().redisUrl)
})
after(async () => {
  const keys = await redis.keys(`${prefix}:*`)
  if (keys.length) await redis.del(...keys)
  await redis.quit()
})

const limits: GateLimits = { endpointConcurrency: 2, tenantConcurrency: 3, leaseMs: 10_000, circuitFailures: 3, circuitCooldownMs: 300 }
const uid = () => randomBytes(4).toString('hex')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

test('an endpoint holds at most endpointConcurrency slots, a tenant at most tenantConcurrency; other tenants are not affected', async () => {
  const gate = new DeliveryGate(redis, prefix, limits)
  const tenant = uid()
  const ep1: GateTarget = { tenant_id: tenant, endpoint_id: uid() }
  const ep2: GateTarget = { tenant_id: tenant, endpoint_id: uid() }
  const ep3: GateTarget = { tenant_id: tenant, endpoint_id: uid() }
  const other: GateTarget = { tenant_id: uid(), endpoint_id: uid() }
  assert.equal((await gate.admit(ep1, 'j1')).verdict, 'ok')
  assert.equal((await gate.admit(ep1, 'j2')).verdict, 'ok')
  const third = await gate.admit(ep1, 'j3')
  assert.equal(third.verdict, 'busy_endpoint')
  assert.ok(third.waitMs > 9_000 && third.waitMs <= 10_000, `until the oldest lease ends, got ${third.waitMs}`)
  assert.equal((await gate.admit(ep2, 'j4')).verdict, 'ok', 'the tenant holds 3 now')
  assert.equal((await gate.admit(ep3, 'j5')).verdict, 'busy_tenant')
  assert.equal((await gate.admit(other, 'j6')).verdict, 'ok')

  assert.deepEqual(await gate.park(ep1, 'j3', 'busy_endpoint'), [], 'no slot was released: stays parked')
  assert.deepEqual(await gate.park(ep3, 'j5', 'busy_tenant'), [])
  // Releasing j1 frees one slot of ep1 and one of the tenant: the oldest job parked on each is woken.
  const done = await gate.finish(ep1, 'j1', 'success', false)
  assert.deepEqual(done, { transition: '', wake: ['j3', 'j5'] })
  assert.equal((await gate.admit(ep1, 'j3')).verdict, 'ok')
  assert.equal((await gate.admit(ep3, 'j5')).verdict, 'busy_tenant', 'j3 took the tenant slot first')
  assert.deepEqual((await gate.finish(ep1, 'j2', 'success', false)).wake, [], 'nothing parked any more')
  assert.equal((await gate.admit(ep3, 'j5')).verdict, 'ok')
})

test('a job parked just after the last slot was released is woken at once', async () => {
  const gate = new DeliveryGate(redis, prefix, { ...limits, endpointConcurrency: 1 })
  const ep: GateTarget = { tenant_id: uid(), endpoint_id: uid() }
  assert.equal((await gate.admit(ep, 'a')).verdict, 'ok')
  assert.equal((await gate.admit(ep, 'b')).verdict, 'busy_endpoint')
  assert.deepEqual((await gate.finish(ep, 'a', 'success', false)).wake, [], 'b is not parked yet')
  assert.deepEqual(await gate.park(ep, 'b', 'busy_endpoint'), ['b'])
})

test('a slot whose lease ended (a crashed worker) is taken over', async () => {
  const gate = new DeliveryGate(redis, prefix, { ...limits, endpointConcurrency: 1, leaseMs: 200 })
  const ep: GateTarget = { tenant_id: uid(), endpoint_id: uid() }
  assert.equal((await gate.admit(ep, 'crashed')).verdict, 'ok')
  assert.equal((await gate.admit(ep, 'next')).verdict, 'busy_endpoint')
  await sleep(250)
  assert.equal((await gate.admit(ep, 'next')).verdict, 'ok')
})

test('the circuit opens after 3 consecutive failures, lets one probe through after the cool-down, and closes on its success', async () => {
  const gate = new DeliveryGate(redis, prefix, limits)
  const ep: GateTarget = { tenant_id: uid(), endpoint_id: uid() }
  const attempt = async (token: string, outcome: 'success' | 'failure') => {
    const a = await gate.admit(ep, token)
    assert.ok(a.verdict === 'ok' || a.verdict === 'probe', `${token} admitted, got ${a.verdict}`)
    return (await gate.finish(ep, token, outcome, a.verdict === 'probe')).transition
  }
  assert.equal(await attempt('f1', 'failure'), '')
  assert.equal(await attempt('f2', 'failure'), '')
  assert.equal(await attempt('s1', 'success'), '', 'a success resets the count')
  assert.equal(await attempt('f3', 'failure'), '')
  assert.equal(await attempt('f4', 'failure'), '')
  assert.equal(await attempt('f5', 'failure'), 'opened')
  const refused = await gate.admit(ep, 'x')
  assert.equal(refused.verdict, 'open')
  assert.ok(refused.waitMs > 0 && refused.waitMs <= 300, `until the cool-down ends, got ${refused.waitMs}`)

  await sleep(320)
  assert.equal((await gate.admit(ep, 'probe1')).verdict, 'probe')
  const during = await gate.admit(ep, 'y')
  assert.equal(during.verdict, 'open', 'one probe at a time')
  assert.ok(during.waitMs > 9_000 && during.waitMs <= 10_000, 'until the probe lease ends')
  assert.equal((await gate.finish(ep, 'probe1', 'failure', true)).transition, '', 'a failed probe re-opens: no new transition')
  assert.equal((await gate.admit(ep, 'z')).verdict, 'open')

  await sleep(320)
  assert.equal((await gate.admit(ep, 'probe2')).verdict, 'probe')
  assert.equal((await gate.finish(ep, 'probe2', 'success', true)).transition, 'closed')
  assert.equal((await gate.admit(ep, 'after')).verdict, 'ok')
  assert.equal((await gate.admit(ep, 'after2')).verdict, 'ok', 'closed: the normal cap again, not one probe')
})

test('a probe that made no attempt (already delivered) hands the probe to the next job', async () => {
  const gate = new DeliveryGate(redis, prefix, { ...limits, circuitFailures: 1 })
  const ep: GateTarget = { tenant_id: uid(), endpoint_id: uid() }
  await gate.admit(ep, 'f')
  assert.equal((await gate.finish(ep, 'f', 'failure', false)).transition, 'opened')
  await sleep(320)
  assert.equal((await gate.admit(ep, 'p1')).verdict, 'probe')
  await gate.finish(ep, 'p1', 'none', true)
  assert.equal((await gate.admit(ep, 'p2')).verdict, 'probe')
})

test('circuitFailures 0 never opens the circuit', async () => {
  const gate = new DeliveryGate(redis, prefix, { ...limits, circuitFailures: 0 })
  const ep: GateTarget = { tenant_id: uid(), endpoint_id: uid() }
  for (let i = 0; i < 10; i++) {
    assert.equal((await gate.admit(ep, `f${i}`)).verdict, 'ok')
    assert.equal((await gate.finish(ep, `f${i}`, 'failure', false)).transition, '')
  }
})
