// Limits on what callers without a valid API key can do (issue #24): failed authentications and
// signups per source address, inbound provider webhooks per connection and failed ones per
// address. Each is a fixed window per (rule, subject) kept in Redis, so every process behind a
// load balancer shares one count: a guesser spreading requests over processes gets no more tries.
// Redis down: requests pass (ingest must keep accepting) and are counted in
// meterline_rate_limit_unchecked_total, as for the per-key limits (auth/request-rate-limit.ts).
import type { Redis } from 'ioredis'
import { TooManyRequestsError } from './errors.js'
import { abuseLimited, rateLimitUnchecked } from './metrics.js'
import { redisScript } from './redis-script.js'

export interface AbuseRule {
  /** events per window; 0 = no limit */
  limit: number
  windowSeconds: number
}

export type AbuseRuleName = 'auth_failures' | 'signup' | 'webhook_connection' | 'webhook_failures'
export type AbuseRules = Record<AbuseRuleName, AbuseRule>

// KEYS: counter. ARGV: window ms, limit, count (1) or only look (0).
// Returns the ms left in a full window (>= 1), else 0.
const HIT = redisScript(`
local n
if ARGV[3] == '1' then
  n = redis.call('INCR', KEYS[1])
  if n == 1 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1])) end
else
  n = tonumber(redis.call('GET', KEYS[1]) or '0')
end
if n < tonumber(ARGV[2]) + tonumber(ARGV[3]) then return 0 end
local left = redis.call('PTTL', KEYS[1])
if left < 1 then return tonumber(ARGV[1]) end
return left`)

/** A look at one subject's window from another script: its counter, its limit, and the refusal when it is full. */
export interface AddressProbe {
  key: string
  limit: number
  /** throws 429 for a full window with `msLeft` to go (PTTL: -1 if the expiry was lost) */
  refuse(msLeft: number): void
}

/** Seconds until a full window ends; a lost expiry (PTTL < 1) counts as the whole window. */
function secondsLeft(msLeft: number, windowSeconds: number): number {
  return msLeft > 0 ? Math.max(1, Math.ceil(msLeft / 1000)) : windowSeconds
}

const MESSAGES: Record<AbuseRuleName, string> = {
  auth_failures: 'too many failed authentications from this address',
  signup: 'too many signups from this address',
  webhook_connection: 'too many webhook deliveries for this connection',
  webhook_failures: 'too many rejected webhook deliveries from this address',
}

export class AbuseLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly rules: AbuseRules,
  ) {}

  /** Seconds until the subject's window ends when it is full (the limit reached), else 0. Counts nothing. */
  blockedFor(rule: AbuseRuleName, subject: string): Promise<number> {
    return this.hit(rule, subject, false)
  }

  /** Counts one event; seconds until the window ends when this one went over the limit, else 0. */
  count(rule: AbuseRuleName, subject: string): Promise<number> {
    return this.hit(rule, subject, true)
  }

  /** 429 too_many_requests (Retry-After) when the subject's window is already full. */
  async assertNotBlocked(rule: AbuseRuleName, subject: string): Promise<void> {
    this.refuse(rule, await this.blockedFor(rule, subject))
  }

  /** Counts one event and answers 429 when it is over the limit. */
  async admit(rule: AbuseRuleName, subject: string): Promise<void> {
    this.refuse(rule, await this.count(rule, subject))
  }

  /**
   * What a caller's own Redis script needs to look at the rule's window for `subject` (the auth
   * hook checks an address and the request limits in one round trip); null: the rule has no limit.
   */
  probe(rule: AbuseRuleName, subject: string): AddressProbe | null {
    const { limit, windowSeconds } = this.rules[rule]
    if (limit <= 0) return null
    return {
      key: this.counterKey(rule, subject),
      limit,
      refuse: (msLeft) => this.refuse(rule, secondsLeft(msLeft, windowSeconds)),
    }
  }

  refuse(rule: AbuseRuleName, retryAfterSeconds: number): void {
    if (retryAfterSeconds <= 0) return
    abuseLimited.inc({ limit: rule })
    throw new TooManyRequestsError(`${MESSAGES[rule]}; retry after ${retryAfterSeconds} s`, retryAfterSeconds)
  }

  private counterKey(rule: AbuseRuleName, subject: string): string {
    return `${this.prefix}:abuse:${rule}:${subject}`
  }

  private async hit(rule: AbuseRuleName, subject: string, count: boolean): Promise<number> {
    const { limit, windowSeconds } = this.rules[rule]
    if (limit <= 0) return 0
    try {
      const msLeft = (await HIT.run(this.redis, [this.counterKey(rule, subject)], [String(windowSeconds * 1000), String(limit), count ? '1' : '0'])) as number
      return msLeft > 0 ? Math.max(1, Math.ceil(msLeft / 1000)) : 0
    } catch {
      rateLimitUnchecked.inc()
      return 0
    }
  }
}
