// A client that sends `total` events with unique ids in bulk requests and, like a well-behaved
// client, resends a request with the same event_ids until it gets its 202 (connection refused,
// 503, 429 while the platform is down, draining or behind).
export interface Burst {
  /** events of requests answered 202 */
  acknowledged: number
  /** requests that failed and were resent */
  retried: number
  done: Promise<void>
}

export function startBurst(opts: { url: string; apiKey: string; eventName: string; total: number; batch?: number; concurrency?: number; idPrefix: string }): Burst {
  const batch = opts.batch ?? 500
  const requests = Math.ceil(opts.total / batch)
  let next = 0
  const burst: Burst = { acknowledged: 0, retried: 0, done: Promise.resolve() }
  const deadline = Date.now() + 180_000
  async function worker() {
    while (next < requests) {
      const r = next++
      const n = Math.min(batch, opts.total - r * batch)
      const body = JSON.stringify({
        events: Array.from({ length: n }, (_, i) => ({
          event_id: `${opts.idPrefix}-${r * batch + i}`, event_name: opts.eventName, external_customer_id: `c${i % 10}`, properties: {},
        })),
      })
      for (;;) {
        if (Date.now() > deadline) throw new Error(`request ${r} not acknowledged within 3 minutes`)
        try {
          const res = await fetch(`${opts.url}/v1/events/raw/bulk`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': opts.apiKey }, body })
          await res.arrayBuffer()
          if (res.status === 202) break
        } catch {
          // the platform is down: resend
        }
        burst.retried++
        await new Promise((r) => setTimeout(r, 100))
      }
      burst.acknowledged += n
    }
  }
  burst.done = Promise.all(Array.from({ length: opts.concurrency ?? 4 }, worker)).then(() => undefined)
  return burst
}

export async function until(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
