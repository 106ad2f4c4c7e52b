// Retries a short operation that can fail for a moment (a dependency reconnecting), with
// exponential backoff: baseMs, 2 x baseMs, ... The last error is thrown.
export async function retrying<T>(work: () => Promise<T>, attempts = 3, baseMs = 200): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (err) {
      if (attempt >= attempts) throw err
      await new Promise((r) => setTimeout(r, baseMs * 2 ** (attempt - 1)))
    }
  }
}

/**
 * Retries for up to `forMs` (a process waiting at start for a dependency that restarts), with
 * backoff from `baseMs` doubling to `maxMs`. An error `final` says is thrown at once; each retry
 * is reported to `onRetry`.
 */
export async function retryingFor<T>(
  work: () => Promise<T>,
  opts: { forMs: number; baseMs?: number; maxMs?: number; final?: (err: unknown) => boolean; onRetry?: (err: unknown, waitMs: number) => void },
): Promise<T> {
  const until = Date.now() + opts.forMs
  for (let wait = opts.baseMs ?? 250; ; wait = Math.min(wait * 2, opts.maxMs ?? 5000)) {
    try {
      return await work()
    } catch (err) {
      if (opts.final?.(err) || Date.now() + wait > until) throw err
      opts.onRetry?.(err, wait)
      await new Promise((r) => setTimeout(r, wait))
    }
  }
}
