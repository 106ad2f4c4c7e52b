// Scripts by SHA-1 on the test stack's Redis: the first run (and any after a flush) finds the
// script unknown and sends it once; errors of the script itself are not taken for NOSCRIPT.
import { after, before, test } from 'node:test'
import { once } from 'node:events'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { loadConfig } from './config.js'
import { createQueueRedis } from './redis.js'
import { redisScript } from './redis-script.js'

const redis = createQueueRedis(loadConfig(process.env).redisUrl, 1500)
const key = `mltest-script-${randomBytes(3).toString('hex')}`
before(async () => {
  if (redis.status !== 'ready') await once(redis, 'ready')
})
after(async () => {
  await redis.del(key)
  redis.disconnect()
})

test('a script unknown to the server is sent once, then run by its SHA-1, also after a flush', async () => {
  // A comment unique to this run: no earlier run cached this script.
  const lua = `-- ${randomBytes(8).toString('hex')}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`
  const sha = createHash('sha1').update(lua).digest('hex')
  const script = redisScript(lua)
  assert.deepEqual(await redis.script('EXISTS', sha), [0])
  assert.equal(await script.run(redis, [key], [2]), 2)
  assert.deepEqual(await redis.script('EXISTS', sha), [1], 'cached by the fallback')
  assert.equal(await script.run(redis, [key], [3]), 5)
  await redis.script('FLUSH')
  assert.equal(await script.run(redis, [key], [4]), 9, 'sent again after the server forgot it')
})

test("an error of the script is the caller's, not a reason to send it again", async () => {
  const script = redisScript(`return redis.error_reply('NOPE ${randomBytes(4).toString('hex')}')`)
  await assert.rejects(script.run(redis, [key], []), /NOPE/)
})
