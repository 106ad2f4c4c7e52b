import type { EntityManager, MikroORM } from '@mikro-orm/postgresql'
import type { ClickHouse } from '../clickhouse/client.js'
import type { Clock } from '../platform/clock.js'
import type { Config } from '../platform/config.js'
import type { AbuseLimiter } from '../platform/abuse-limit.js'
import type { EnvironmentCloneQueue, IntegrationQueue, InvoiceComputeQueue, PaymentRetryQueue, WebhookQueue } from './queues.js'
import type { UsageQuery, UsageRow } from '../clickhouse/queries/meter-usage.js'
import type { Scope } from './db/scope.js'

/** What billing-api use cases need from the outside world, passed explicitly. */
/** Every event acknowledged before watermarkMs() (billing clock, epoch ms) is counted (billing/ingest-watermark.ts). */
export interface IngestWatermark {
  watermarkMs(): Promise<number>
}

export interface BillingContext {
  config: Config
  orm: MikroORM
  ch: ClickHouse
  clock: Clock
  /** present where Redis is configured (billing-api and scheduler) */
  webhooks?: WebhookQueue
  /** asynchronous invoice recomputation (billing/compute-job.ts); present where Redis is configured */
  invoiceCompute?: InvoiceComputeQueue
  /** provider sync jobs (integrations/queue.ts); present where Redis is configured */
  integrations?: IntegrationQueue
  /** dunning retries of failed payments (payments/retry-queue.ts); present where Redis is configured */
  paymentRetries?: PaymentRetryQueue
  /** failed payment attempts as inbound provider events report them (payments/payment-failures.ts) */
  paymentFailures?: PaymentFailureReporting
  /** environment clone jobs (environment-clone/queue.ts); present where Redis is configured */
  environmentClone?: EnvironmentCloneQueue
  /** how usage is read; absent: straight from ClickHouse (meters/usage-reader.ts). A billing run sets its prefetch. */
  usage?: UsageReader
  /** billing waits for it to pass a period's end (billing/ingest-watermark.ts); absent: no wait */
  ingestWatermark?: IngestWatermark
  /** limits on unauthenticated callers: signup and inbound webhooks per address (platform/abuse-limit.ts); present where Redis is configured */
  abuse?: AbuseLimiter
  /** invoicing for wallet auto top-ups (invoices/top-up-invoices.ts) */
  topUpInvoicing: TopUpInvoicing
}

/**
 * Invoicing as a wallet's auto top-up needs it. Finalizing an invoice may debit a wallet whose
 * auto top-up creates and finalizes an invoice: a recursion at run time, so the wallets domain
 * reaches invoicing through the context, wired by the composition root, and no import closes a
 * circle between the two.
 */
export interface TopUpInvoicing {
  /** Creates the ONE_OFF invoice and finalizes it in the caller's transaction. */
  createFinalized(ctx: BillingContext, tx: EntityManager, scope: Scope, actor: string, input: TopUpInvoiceInput): Promise<{ id: string; invoice_status: string }>
}

export interface TopUpInvoiceInput {
  customer_id: string
  currency: string
  billing_reason: string
  line: { display_name: string; amount: string; quantity: string }
  description: string
  metadata: Record<string, string>
}

/** How billing reads usage: one function from a usage query to its rows (meters/usage-reader.ts). */
export type UsageReader = (q: UsageQuery) => Promise<UsageRow[]>

/**
 * Recording a failed payment attempt, as an inbound provider webhook needs it. The payments
 * domain charges through the integrations domain (dunning, payment links), so integrations
 * reaches payments through the context, wired by the composition root, and no import closes a
 * circle between the two.
 */
export interface PaymentFailureReporting {
  /** records the failure in the caller's transaction and queues the schedule's next retry */
  record(
    ctx: BillingContext, tx: EntityManager, scope: Scope, invoiceId: string,
    input: { failure_code?: string; reason?: string; idempotency_key?: string }, actor: string,
  ): Promise<{ attempt: number }>
}
