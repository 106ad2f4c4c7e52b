// Ingest with retries that cannot double count: event ids and timestamps are fixed before the first attempt
// (event-batches.ts) and every attempt of a request sends the very same body. A request whose
// answer was lost (the server may have accepted it) is simply sent again; the duplicate events
// are dropped by the aggregator's dedup of (event_id, timestamp).
import type { ErrorResponse, MeterlineClient } from './client.js'
import { toRequests, withEventIds, type EventInput, type KeyedEvent } from './event-batches.js'
import { DEFAULT_RETRY_POLICY, isRetryable, retryAfterMs, retryDelayMs, type RetryPolicy } from './retry-policy.js'

export interface IngestOptions {
  retry?: Partial<RetryPolicy>
  /** events per request, at most 1000 */
  batchSize?: number
  /** injected by tests; defaults to setTimeout */
  sleep?: (ms: number) => Promise<void>
  random?: () => number
  /** called before each wait: to log, or to count attempts */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string; eventIds: string[] }) => void
}

export interface IngestResult {
  /** every event's id, in the order given: keep them to resend later with the same ids */
  eventIds: string[]
  requests: { batchId: string; count: number; attempts: number }[]
}

/** The request failed for good; `eventIds` are the ids to resend it with later. */
export class IngestError extends Error {
  constructor(
    message: string,
    readonly eventIds: string[],
    readonly attempts: number,
    readonly status?: number,
    readonly body?: ErrorResponse,
  ) {
    super(message)
    this.name = 'IngestError'
  }
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export async function ingestEvents(client: MeterlineClient, events: readonly EventInput[], opts: IngestOptions = {}): Promise<IngestResult> {
  const keyed = withEventIds(events)
  const result: IngestResult = { eventIds: keyed.map((e) => e.event_id), requests: [] }
  for (const request of toRequests(keyed, opts.batchSize)) {
    result.requests.push(await sendWithRetries(client, request, opts))
  }
  return result
}

async function sendWithRetries(client: MeterlineClient, events: KeyedEvent[], opts: IngestOptions): Promise<IngestResult['requests'][number]> {
  const policy = { ...DEFAULT_RETRY_POLICY, ...opts.retry }
  const sleep = opts.sleep ?? realSleep
  const random = opts.random ?? Math.random
  const eventIds = events.map((e) => e.event_id)
  const body = { events }
  for (let attempt = 1; ; attempt++) {
    let status: number | 'network'
    let reason: string
    let serverMs: number | undefined
    let error: ErrorResponse | undefined
    try {
      const res = await client.POST('/v1/events/raw/bulk', { body })
      if (res.data) return { batchId: res.data.batch_id, count: res.data.count, attempts: attempt }
      status = res.response.status
      error = res.error
      reason = `${status} ${error?.code ?? ''} ${error?.message ?? ''}`.trim()
      serverMs = retryAfterMs(res.response.headers.get('retry-after'), Date.now())
    } catch (err) {
      status = 'network'
      reason = err instanceof Error ? err.message : String(err)
    }
    if (!isRetryable(status) || attempt >= policy.maxAttempts) {
      throw new IngestError(`ingest failed after ${attempt} attempt(s): ${reason}`, eventIds, attempt, status === 'network' ? undefined : status, error)
    }
    const delayMs = retryDelayMs(attempt, policy, random(), serverMs)
    opts.onRetry?.({ attempt, delayMs, reason, eventIds })
    await sleep(delayMs)
  }
}
