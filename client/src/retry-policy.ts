// When and how long to wait before sending a request again. Pure: the caller injects randomness.

export interface RetryPolicy {
  /** attempts in all, the first included */
  maxAttempts: number
  /** the delay before the second attempt; doubles on every further attempt */
  baseDelayMs: number
  maxDelayMs: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 200, maxDelayMs: 10_000 }

/**
 * A request may succeed when sent again after: no answer at all (network error, timeout), 408,
 * 429 (too many requests, aggregation behind), or any 5xx (503 while a dependency is down or
 * the spool is full). Any other 4xx is the request's own fault and fails the same way again.
 */
export function isRetryable(status: number | 'network'): boolean {
  return status === 'network' || status === 408 || status === 429 || status >= 500
}

/** Retry-After in seconds (the only form Meterline sends) or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs: number): number | undefined {
  if (!header) return undefined
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs)
}

/**
 * The wait after failed attempt `attempt` (1-based): exponential backoff with "equal jitter"
 * (half fixed, half random, so clients that failed together do not retry together), never
 * shorter than the server's Retry-After, never longer than maxDelayMs unless the server asks.
 */
export function retryDelayMs(attempt: number, policy: RetryPolicy, random: number, serverMs?: number): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1))
  const backoff = Math.round(exp / 2 + (exp / 2) * random)
  return serverMs === undefined ? backoff : Math.max(backoff, serverMs)
}
