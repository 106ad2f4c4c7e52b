import type { MikroORM } from '@mikro-orm/postgresql'
import type { ClickHouse } from '../clickhouse/client.js'
import type { Clock } from '../platform/clock.js'
import type { Config } from '../platform/config.js'
import type { IntegrationQueue, InvoiceComputeQueue, WebhookQueue } from './queues.js'
import type { UsageReader } from './meters/usage-reader.js'

/** What billing-api use cases need from the outside world, passed explicitly. */
export interface BillingContext {
  config: Config
  orm: MikroORM
  ch: ClickHouse
  clock: Clock
  /** present where Redis is configured (billing-api and scheduler) */
  webhooks?: WebhookQueue
  /** asynchronous invoice recomputation (invoices/compute-job.ts); present where Redis is configured */
  invoiceCompute?: InvoiceComputeQueue
  /** provider sync jobs (integrations/queue.ts); present where Redis is configured */
  integrations?: IntegrationQueue
  /** how usage is read; absent: straight from ClickHouse (meters/usage-reader.ts). A billing run sets its prefetch. */
  usage?: UsageReader
}
