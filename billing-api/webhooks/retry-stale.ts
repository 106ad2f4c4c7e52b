// The stale-webhook retry job (spec: Events, "Stale webhook retry job settings"): re-queues
// deliveries that are still PENDING or FAILED, newest first, skipping events older than 48
// hours, excluded tenants, event types outside the allow-list (empty = all), deliveries
// that already failed max_attempts times and those of deleted or disabled endpoints. A token bucket caps the re-queue rate per run.
import type { BillingContext } from '../context.js'

export interface StaleRetrySettings {
  enabled: boolean
  /** re-queues per second, token bucket per run */
  rate_limit: number
  excluded_tenants: string[]
  allowed_event_types: string[]
  max_attempts: number
  /** how many deliveries one run considers */
  batch_size: number
}

export const DEFAULT_STALE_RETRY: StaleRetrySettings = {
  enabled: true,
  rate_limit: 5,
  excluded_tenants: [],
  allowed_event_types: [],
  max_attempts: 5,
  batch_size: 100,
}

const MAX_AGE_MS = 48 * 3_600_000
/** A delivery touched more recently than this is still in the queue's own retry chain. */
const QUIET_MS = 5 * 60_000

/** A token bucket that starts full with `rate` tokens and refills `rate` per second. */
export class TokenBucket {
  private tokens: number
  private last: number
  constructor(private readonly rate: number, private readonly now: () => number = () => performance.now()) {
    this.tokens = rate
    this.last = now()
  }

  async take(): Promise<void> {
    for (;;) {
      const t = this.now()
      this.tokens = Math.min(this.rate, this.tokens + ((t - this.last) / 1000) * this.rate)
      this.last = t
      if (this.tokens >= 1) {
        this.tokens -= 1
        return
      }
      await new Promise((r) => setTimeout(r, Math.ceil(((1 - this.tokens) / this.rate) * 1000)))
    }
  }
}

/** Returns the re-queued delivery ids, in the order they were re-queued. */
export async function retryStaleWebhooks(ctx: BillingContext, settings: StaleRetrySettings = DEFAULT_STALE_RETRY, tenantId?: string): Promise<string[]> {
  if (!settings.enabled || !ctx.webhooks) return []
  const now = ctx.clock.now().getTime()
  const cutoff = new Date(now - MAX_AGE_MS)
  const quiet = new Date(now - QUIET_MS)
  const rows = (await ctx.orm.em.getConnection().execute(
    `SELECT id FROM webhook_deliveries d
      WHERE delivery_status IN ('PENDING', 'FAILED') AND attempts < ? AND created_at >= ? AND updated_at < ?
        AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.tenant_id = d.tenant_id AND e.status = 'published' AND e.disabled_at IS NULL)
        AND (?::text IS NULL OR tenant_id = ?)
        AND NOT (tenant_id = ANY(?::text[]))
        AND (cardinality(?::text[]) = 0 OR event_name = ANY(?::text[]))
      ORDER BY created_at DESC, id DESC
      LIMIT ?`,
    [
      settings.max_attempts, cutoff, quiet, tenantId ?? null, tenantId ?? null, `{${settings.excluded_tenants.join(',')}}`,
      `{${settings.allowed_event_types.join(',')}}`, `{${settings.allowed_event_types.join(',')}}`, settings.batch_size,
    ],
  )) as { id: string }[]
  const bucket = new TokenBucket(settings.rate_limit)
  for (const { id } of rows) {
    await bucket.take()
    await ctx.webhooks.enqueue([id])
  }
  return rows.map((r) => r.id)
}
