// Per-tenant token bucket in Redis for integration event processing (spec: "rate limits set
// under an integration_events setting"). Capacity = rate (one second of burst); refilled
// continuously at `rate` tokens per second. The script runs atomically on Redis's own clock,
// so every worker process shares one bucket per tenant.
import type { Redis } from 'ioredis'

const TAKE = `
local rate = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or rate
local ts = tonumber(state[2]) or now
tokens = math.min(rate, tokens + (now - ts) * rate / 1000)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = math.ceil((1 - tokens) * 1000 / rate) end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], 60000)
return wait`

export class TenantRateLimiter {
  constructor(private readonly redis: Redis, private readonly prefix: string) {}

  /** Takes a token: 0 when granted, else the milliseconds until one is available (nothing taken). */
  async take(tenantId: string, ratePerSecond: number): Promise<number> {
    return Number(await this.redis.eval(TAKE, 1, `${this.prefix}:integration-events:bucket:${tenantId}`, String(ratePerSecond)))
  }
}
