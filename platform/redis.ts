// The one module that owns Redis connections (BullMQ requires maxRetriesPerRequest: null).
import { Redis } from 'ioredis'

export function createRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false })
}

/**
 * The connection requests enqueue and read jobs on: with Redis down a command fails at once
 * (no offline queue) or after `commandTimeoutMs`, and the API answers 503 instead of hanging.
 * Workers keep createRedis (BullMQ's blocking reads need maxRetriesPerRequest: null) and
 * resume by themselves when Redis returns.
 */
export function createQueueRedis(url: string, commandTimeoutMs: number): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: commandTimeoutMs, enableReadyCheck: true, lazyConnect: false })
}
