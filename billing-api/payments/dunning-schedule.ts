// The dunning schedule: after the n-th failed payment attempt of an invoice, the next retry
// is `schedule[n - 1]` later; after the last entry there is no further retry. The schedule
// comes from PAYMENT_RETRY_SCHEDULE (platform/config.ts). Pure.

/** When the retry after failure number `attempt` (1-based) is due, or null once the schedule is exhausted. */
export function nextRetryAt(scheduleMs: readonly number[], attempt: number, failedAt: Date): Date | null {
  if (attempt < 1 || attempt > scheduleMs.length) return null
  return new Date(failedAt.getTime() + scheduleMs[attempt - 1])
}

/** The BullMQ job id of the retry after failure `attempt`: one per invoice and attempt, so a repeat adds no job. */
export const retryJobId = (invoiceId: string, attempt: number): string => `dunning-${invoiceId}-${attempt}`
