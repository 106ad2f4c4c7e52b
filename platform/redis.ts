// The one module that owns Redis connections (BullMQ requires maxRetriesPerRequest: null).
import { Redis, type RedisOptions } from 'ioredis'
import { ServiceUnavailableError } from './errors.js'
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

/**
 * Bounds a queue operation by the connection's command timeout. BullMQ waits for a connection
 * that never became ready (Redis down when the process started) before it sends anything, so
 * the command timeout alone does not bound that case.
 */
export async function withinCommandTimeout<T>(redis: Redis, work: Promise<T>): Promise<T> {
  const ms = redis.options.commandTimeout
  if (!ms) return work
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ServiceUnavailableError('the job queue (Redis) is unavailable; retry later')), ms)
  })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

/** BullMQ re-emits connection errors on every queue; the connection's own listener above logs and counts them. */
export function quietQueueErrors(queue: { on(event: 'error', listener: (err: Error) => void): unknown }): void {
  queue.on('error', () => undefined)
}
