// The write publisher at start-up: it waits for its Redis connection instead of failing before
// it is connected (every start logged a level-50 error that was not one), and says so when Redis
// is really down. Real Redis (the test stack's).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Redis } from 'ioredis'
import { loadConfig } from '../../platform/config.js'
import { createQueueRedis } from '../../platform/redis.js'
import { startWritePublisher } from './write-bus.js'

const config = loadConfig(process.env)

test('a publisher started before its connection is ready logs nothing, then says hello with the marks it held', async () => {
  const prefix = `wb-${Date.now()}`
  const sub = new Redis(config.redisUrl)
  const heard: string[] = []
  await sub.subscribe(`${prefix}:live:writes`)
  sub.on('message', (_ch: string, m: string) => heard.push(m))
  const redis = createQueueRedis(config.redisUrl, 2000)
  assert.notEqual(redis.status, 'ready', 'the connection is still being made')
  const logged: string[] = []
  const p = startWritePublisher(redis, prefix, { asOf: () => 1, heartbeatMs: 20, log: (msg) => logged.push(msg) })
  p.listener({ writes: [{ shard: 3, epoch: '7', seq: '42' }], buckets: [] })
  await new Promise((r) => setTimeout(r, 500))
  p.stop()
  assert.deepEqual(logged, [])
  assert.ok(heard.length > 0 && JSON.parse(heard[0].slice(heard[0].indexOf('|') + 1)).hello === true, `the first message is the hello: ${heard[0]}`)
  assert.equal(await redis.hget(`${prefix}:live:hwm`, '3|7'), '42', 'the mark of the write committed before the connection was ready')
  await redis.quit()
  await sub.quit()
})

test('a publisher whose Redis is down says so once, after the grace', async () => {
  const redis = createQueueRedis('redis://127.0.0.1:1', 200)
  redis.on('error', () => {})
  const logged: string[] = []
  const p = startWritePublisher(redis, 'down', { asOf: () => 1, heartbeatMs: 20, connectGraceMs: 200, log: (msg) => logged.push(msg) })
  await new Promise((r) => setTimeout(r, 700))
  p.stop()
  redis.disconnect()
  assert.equal(logged.length, 1, JSON.stringify(logged))
  assert.match(logged[0], /Redis has not been reachable/)
})
