// The one module that owns Redis connections (BullMQ requires maxRetriesPerRequest: null).
import { Redis, type RedisOptions } from 'ioredis'
import { dependencyUnavailable } from './metrics.js'

/**
 * ioredis reconnects by itself; without an 'error' listener it prints every failed attempt as
 * an unhandled error event. One line per outage instead, and a count per failed attempt.
 */
function open(url: string, options: RedisOptions, role: string): Redis {
  const redis = new Redis(url, options)
  let down = false
  redis.on('error', (err: Error) => {
    dependencyUnavailable.inc({ dependency: 'redis' })
    if (!down) console.error(`[redis:${role}] connection lost (${err.message}); reconnecting`)
    down = true
  })
  redis.on('ready', () => {
    if (down) console.error(`[redis:${role}] reconnected`)
    down = false
  })
  return redis
}

export function createRedis(url: string): Redis {
  return open(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false }, 'workers')
}

/**
 * The connection requests enqueue and read jobs on: with Redis down a command fails at once
 * (no offline queue) or after `commandTimeoutMs`, and the API answers 503 instead of hanging.
 * Workers keep createRedis (BullMQ's blocking reads need maxRetriesPerRequest: null) and
 * resume by themselves when Redis returns.
 */
export function createQueueRedis(url: string, commandTimeoutMs: number): Redis {
  return open(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: commandTimeoutMs, enableReadyCheck: true, lazyConnect: false }, 'queues')
}
