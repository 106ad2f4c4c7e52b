// Inbound request limits per API key and per tenant, on every authenticated route (billing
// API and ingest). Not to be confused with integrations/rate-limit.ts, which paces our own
// outbound provider syncs. A fixed window per counter, started by its first request and kept
// in Redis (one Lua call, both counters), so every process shares the counts. Over a limit:
// 429 too_many_requests with Retry-After = the seconds left in that window. Redis down: the
// request passes (ingest must keep accepting while Redis is away), and it is counted in
// meterline_rate_limit_unchecked_total.
import type { Redis } from 'ioredis'
import { TooManyRequestsError } from '../../platform/errors.js'
import { rateLimitUnchecked, requestsRateLimited } from '../../platform/metrics.js'
import { redisScript } from '../../platform/redis-script.js'
import type { AddressProbe } from '../../platform/abuse-limit.js'

export interface RequestRateLimitSettings {
  windowSeconds: number
  /** requests per window; 0 = no limit */
  perKey: number
  perTenant: number
}

/** A tenant's own limits (tenants.rate_limit_per_key / _per_tenant); null = the default. */
export interface TenantRateLimits {
  perKey: number | null
  perTenant: number | null
}

export interface RateLimitSubject {
  apiKeyId: string
  tenantId: string
  rateLimits?: TenantRateLimits
}

export function effectiveLimits(defaults: RequestRateLimitSettings, own: TenantRateLimits | undefined): { perKey: number; perTenant: number } {
  return { perKey: own?.perKey ?? defaults.perKey, perTenant: own?.perTenant ?? defaults.perTenant }
}

// KEYS: key counter, tenant counter, an address's counter to look at first (or any key when
// its limit is 0). ARGV: window ms, key limit, tenant limit (0 = none), address limit (0 = no look).
// Returns {0, 0} when admitted, else {1 (key), 2 (tenant) or 3 (address), ms left in that
// window}. A request refused on its address counts nowhere; one refused on its key is not
// counted against the tenant.
const HIT = redisScript(`
local window = tonumber(ARGV[1])
local address = tonumber(ARGV[4])
if address > 0 and tonumber(redis.call('GET', KEYS[3]) or '0') >= address then return {3, redis.call('PTTL', KEYS[3])} end
local function over(key, limit)
  if limit <= 0 then return false end
  local n = redis.call('INCR', key)
  if n == 1 then redis.call('PEXPIRE', key, window) end
  return n > limit
end
if over(KEYS[1], tonumber(ARGV[2])) then return {1, redis.call('PTTL', KEYS[1])} end
if over(KEYS[2], tonumber(ARGV[3])) then return {2, redis.call('PTTL', KEYS[2])} end
return {0, 0}`)

export class RequestRateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly defaults: RequestRateLimitSettings,
  ) {}

  /**
   * Throws TooManyRequestsError when the key's or the tenant's window is full. With `address`,
   * that window is looked at first in the same round trip, and refused by its own rule.
   */
  async admit(auth: RateLimitSubject, address?: AddressProbe | null): Promise<void> {
    const { perKey, perTenant } = effectiveLimits(this.defaults, auth.rateLimits)
    if (perKey <= 0 && perTenant <= 0 && !address) return
    const windowMs = this.defaults.windowSeconds * 1000
    const counter = `${this.prefix}:ratelimit:key:${auth.apiKeyId}`
    let result: [number, number]
    try {
      result = (await HIT.run(
        this.redis, [counter, `${this.prefix}:ratelimit:tenant:${auth.tenantId}`, address?.key ?? counter],
        [String(windowMs), String(perKey), String(perTenant), String(address?.limit ?? 0)],
      )) as [number, number]
    } catch {
      rateLimitUnchecked.inc()
      return
    }
    const [which, msLeft] = result
    if (which === 0) return
    if (which === 3) return address!.refuse(msLeft)
    // PTTL is -1 only if the expiry was lost; then the whole window is the honest answer.
    const retryAfter = Math.max(1, Math.ceil((msLeft > 0 ? msLeft : windowMs) / 1000))
    const [limit, whose] = which === 1 ? [perKey, 'this API key'] : [perTenant, 'this tenant']
    requestsRateLimited.inc({ limit: which === 1 ? 'key' : 'tenant' })
    throw new TooManyRequestsError(`rate limit exceeded: ${limit} requests per ${this.defaults.windowSeconds} s for ${whose}; retry after ${retryAfter} s`, retryAfter)
  }
}
