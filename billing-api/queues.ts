// The background queues the request context carries: contracts only. Their BullMQ queues and
// workers live with their domains (webhooks/queue.ts, invoices/compute-job.ts,
// integrations/queue.ts), so the context needs no domain's module and no circle closes through it.
import type { Scope } from './db/scope.js'

export interface WebhookQueue {
  enqueue(deliveryIds: string[]): Promise<void>
  close(): Promise<void>
}

export interface ComputeJobData {
  tenant_id: string
  environment_id: string
  invoice_id: string
  version?: number
}

export type ComputeStatus = 'queued' | 'running' | 'completed' | 'failed'

export interface ComputeJobView {
  workflow_id: string
  status: ComputeStatus
  invoice_id: string
  attempts: number
  error: string | null
  created_at: string
  finished_at: string | null
}

export interface InvoiceComputeQueue {
  enqueue(data: ComputeJobData): Promise<string>
  /** the job as seen from `scope`; another scope's or an expired id is not found */
  status(scope: Scope, workflowId: string): Promise<ComputeJobView>
  close(): Promise<void>
}

export type MappedEntityType = 'customer' | 'invoice' | 'subscription'

export interface IntegrationSyncJob {
  tenant_id: string
  environment_id: string
  provider: string
  entity_type: MappedEntityType
  entity_id: string
  /** what caused it: a system event id, or a resync reason */
  cause: string
  /** the connection's settings.integration_events.rate_limit_per_second, if set */
  rate_limit_per_second?: number
}

export interface IntegrationQueue {
  /** jobs with the same `cause`, provider and entity are enqueued once while the first is kept */
  enqueue(jobs: IntegrationSyncJob[]): Promise<void>
  close(): Promise<void>
}

/** A dunning retry of an invoice's payment after its failure number `attempt` (payments/retry-queue.ts). */
export interface PaymentRetryJob {
  tenant_id: string
  environment_id: string
  invoice_id: string
  attempt: number
}

export interface PaymentRetryQueue {
  /** a delayed job; one per invoice and attempt (a repeat adds none) */
  schedule(job: PaymentRetryJob, delayMs: number): Promise<void>
  close(): Promise<void>
}

export interface EnvironmentCloneJobData {
  tenant_id: string
  source_environment_id: string
  target_environment_id: string
  actor: string
}

export interface EnvironmentCloneJobView {
  job_id: string
  status: ComputeStatus
  source_environment_id: string
  target_environment_id: string
  /** environment-clone/run-clone.ts CloneProgress; null until the job starts */
  progress: object | null
  attempts: number
  error: string | null
  created_at: string
  finished_at: string | null
}

export interface EnvironmentCloneQueue {
  enqueue(data: EnvironmentCloneJobData): Promise<string>
  /** another tenant's job, or one neither of whose environments is the caller's, is not found */
  status(tenantId: string, environmentId: string, jobId: string): Promise<EnvironmentCloneJobView>
  close(): Promise<void>
}
