// A Lua script run by its SHA-1 (EVALSHA): the hot paths (request limits, abuse checks) would
// otherwise send the whole script text with every request. A server that does not know the
// script yet (first use, a restarted or flushed Redis) answers NOSCRIPT; then it is sent once
// with EVAL, which also caches it there.
import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'

export interface RedisScript {
  run(redis: Redis, keys: string[], args: (string | number)[]): Promise<unknown>
}

export function redisScript(lua: string): RedisScript {
  const sha = createHash('sha1').update(lua).digest('hex')
  return {
    async run(redis, keys, args) {
      try {
        return await redis.evalsha(sha, keys.length, ...keys, ...args)
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err
        return redis.eval(lua, keys.length, ...keys, ...args)
      }
    },
  }
}
