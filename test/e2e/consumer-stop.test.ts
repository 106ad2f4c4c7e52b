// An aggregator stopped while its consumer is still starting (its checks, connect, subscribe and
// join take seconds on a loaded broker) must not start consuming afterwards: a consumer that
// joins after its stop holds partitions nobody writes for, and kafkajs' disconnect before `run`
// resolves can leave it consuming (tulios/kafkajs#1639).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Kafka } from 'kafkajs'
import { createKafka } from '../../platform/kafka.js'
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform.js'
import { created, ingestAll } from '../support/fixtures.js'
import { groupAggregator } from '../support/group-aggregator.js'

let p: TestPlatform
before(async () => {
  p = await startTestPlatform({ config: { spool: { ...testConfig().spool, enabled: false } } })
})
after(async () => {
  await p?.stop()
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The real client, whose admin connections open `ms` late (a loaded broker). */
function slowAdmins(kafka: Kafka, ms: number): Kafka {
  return new Proxy(kafka, {
    get(target, key) {
      if (key === 'admin') {
        return (...args: Parameters<Kafka['admin']>) => {
          const admin = target.admin(...args)
          const connect = admin.connect.bind(admin)
          admin.connect = async () => {
            await sleep(ms)
            return connect()
          }
          return admin
        }
      }
      const value: unknown = Reflect.get(target, key)
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
}

test('an aggregator stopped while its consumer starts never joins its group afterwards', async () => {
  const { api } = await p.newTenant()
  await created(api.post('/v1/meters', { name: 'calls', event_name: 'calls', aggregation: { type: 'COUNT' } }))
  await ingestAll(api, Array.from({ length: 10 }, (_, i) => ({
    event_id: `s${i}`, event_name: 'calls', external_customer_id: 'c1', timestamp: '2026-10-15T12:00:00Z', properties: {},
  })))
  const groupId = `${p.config.aggregatorGroupId}-stopped-early`
  const agg = await groupAggregator(p, 'early', { kafka: slowAdmins(createKafka(p.config, 'early'), 2500), name: 'early', groupId })
  let joinedAfterStop = false
  void agg.joined.then(() => (joinedAfterStop = true))
  await agg.stop()
  // Its start goes on for seconds after the stop: two admin checks, then connect and join.
  await sleep(12_000)
  assert.equal(joinedAfterStop, false, 'no join after the stop')
  assert.deepEqual(agg.assignment, [], 'no partition held')
  assert.equal(agg.stats.events, 0, 'nothing read')
})
