// Who may attempt a delivery now, shared by every worker process through Redis. An endpoint
// and a tenant each hold at most N attempts in flight (leases in a sorted set, so a crashed
// worker's slot expires), and an endpoint whose attempts keep failing has its circuit opened:
// no attempt until the cool-down ends, then one probe (half-open) whose outcome closes or
// re-opens it. A delivery refused for want of a slot is parked and woken when a slot of its
// endpoint or tenant is released; one refused by an open circuit waits for the cool-down.
// Each script reads the time from Redis, so processes with skewed clocks agree. A manual retry
// (POST /v1/webhooks/{id}/retry) to an endpoint whose circuit is open waits for the cool-down
// like any other delivery, and may be the probe.
import type { Redis } from 'ioredis'

export interface GateTarget {
  tenant_id: string
  endpoint_id: string
}

export interface GateLimits {
  endpointConcurrency: number
  tenantConcurrency: number
  /** how long a slot is held at most: the attempt's timeout plus the time to record it */
  leaseMs: number
  /** consecutive failed attempts that open the circuit; 0 never opens it */
  circuitFailures: number
  circuitCooldownMs: number
}

/** ok/probe: a slot was taken (probe: the half-open circuit's one trial); the others: try again after `waitMs` at the latest. */
export type Verdict = 'ok' | 'probe' | 'open' | 'busy_endpoint' | 'busy_tenant'
export interface Admission { verdict: Verdict; waitMs: number }

export type AttemptOutcome = 'success' | 'failure' | 'none'
export type CircuitTransition = 'opened' | 'closed' | ''

// KEYS: endpoint slots, tenant slots, circuit, endpoint parked, tenant parked
// ARGV: token, lease ms, endpoint cap, tenant cap
const ADMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
local c = redis.call('HMGET', KEYS[3], 'open_until', 'probe_until')
local openUntil = tonumber(c[1])
local probe = false
if openUntil then
  if now < openUntil then return {'open', openUntil - now} end
  local probeUntil = tonumber(c[2])
  if probeUntil and now < probeUntil then return {'open', probeUntil - now} end
  probe = true
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return {'busy_endpoint', tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]) - now}
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return {'busy_tenant', tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2]) - now}
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('ZADD', KEYS[2], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease * 2)
redis.call('PEXPIRE', KEYS[2], lease * 2)
if probe then
  redis.call('HSET', KEYS[3], 'probe_until', now + lease)
  return {'probe', 0}
end
return {'ok', 0}`

// KEYS: endpoint slots, tenant slots, circuit, endpoint parked, tenant parked
// ARGV: token, outcome, failures to open (0: never), cool-down ms, circuit ttl ms, was the probe (1/0)
// Returns the transition and up to two parked job ids to wake (one per released slot kind).
const FINISH = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local transition = ''
local wasOpen = redis.call('HEXISTS', KEYS[3], 'open_until') == 1
if ARGV[2] == 'success' then
  if wasOpen then transition = 'closed' end
  redis.call('DEL', KEYS[3])
elseif ARGV[2] == 'failure' then
  local failures = redis.call('HINCRBY', KEYS[3], 'failures', 1)
  local threshold = tonumber(ARGV[3])
  if wasOpen or (threshold > 0 and failures >= threshold) then
    redis.call('HSET', KEYS[3], 'open_until', now + tonumber(ARGV[4]))
    redis.call('HDEL', KEYS[3], 'probe_until')
    if not wasOpen then transition = 'opened' end
  end
  redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[5]))
elseif ARGV[6] == '1' then
  redis.call('HDEL', KEYS[3], 'probe_until')
end
local woken = {transition}
for i = 4, 5 do
  local p = redis.call('ZPOPMIN', KEYS[i])
  if p[1] then table.insert(woken, p[1]) end
end
return woken`

// KEYS: parked set, endpoint slots, tenant slots; ARGV: token, endpoint cap, tenant cap, ttl ms
// Parks the job, then wakes the oldest parked one at once if a slot was released meanwhile
// (its wake-up would otherwise have found nobody to wake).
const PARK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
if redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') < tonumber(ARGV[2]) and redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf') < tonumber(ARGV[3]) then
  local p = redis.call('ZPOPMIN', KEYS[1])
  if p[1] then return {p[1]} end
end
return {}`

/** How long a circuit's failure count and state are kept after its last failure. */
const CIRCUIT_TTL_MS = 24 * 3_600_000

export class DeliveryGate {
  constructor(private readonly redis: Redis, private readonly prefix: string, private readonly limits: GateLimits) {}

  private keys(t: GateTarget): string[] {
    const k = `${this.prefix}:webhook-gate`
    return [
      `${k}:slots:endpoint:${t.endpoint_id}`, `${k}:slots:tenant:${t.tenant_id}`, `${k}:circuit:${t.endpoint_id}`,
      `${k}:parked:endpoint:${t.endpoint_id}`, `${k}:parked:tenant:${t.tenant_id}`,
    ]
  }

  /** Takes a slot for `token` (the job id) unless the circuit is open or a cap is reached. */
  async admit(t: GateTarget, token: string): Promise<Admission> {
    const l = this.limits
    const [verdict, waitMs] = (await this.redis.eval(ADMIT, 5, ...this.keys(t), token, l.leaseMs, l.endpointConcurrency, l.tenantConcurrency)) as [Verdict, number]
    return { verdict, waitMs: Number(waitMs) }
  }

  /** Releases the slot, records the outcome in the circuit; returns the transition and the parked job ids to wake. */
  async finish(t: GateTarget, token: string, outcome: AttemptOutcome, wasProbe: boolean): Promise<{ transition: CircuitTransition; wake: string[] }> {
    const l = this.limits
    const ttl = Math.max(CIRCUIT_TTL_MS, 2 * l.circuitCooldownMs)
    const [transition, ...wake] = (await this.redis.eval(FINISH, 5, ...this.keys(t), token, outcome, l.circuitFailures, l.circuitCooldownMs, ttl, wasProbe ? 1 : 0)) as [CircuitTransition, ...string[]]
    return { transition, wake }
  }

  /** Parks a job refused for want of a slot; returns job ids to wake now (a slot was released meanwhile). */
  async park(t: GateTarget, token: string, on: 'busy_endpoint' | 'busy_tenant'): Promise<string[]> {
    const [epSlots, tenantSlots, , epParked, tenantParked] = this.keys(t)
    const l = this.limits
    return (await this.redis.eval(PARK, 3, on === 'busy_endpoint' ? epParked : tenantParked, epSlots, tenantSlots, token, l.endpointConcurrency, l.tenantConcurrency, CIRCUIT_TTL_MS)) as string[]
  }
}
