// The one module that owns Redis connections (BullMQ requires maxRetriesPerRequest: null).
import { Redis } from 'ioredis'

export function createRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false })
}
