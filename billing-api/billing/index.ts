// The billing domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { invoiceUsageOverThreshold } from './auto-invoice-threshold.js'
export { billDueSubscriptions } from './bill-due.js'
export { cancelDueSubscriptions } from './cancel-due.js'
export { createInvoiceComputeQueue, INVOICE_COMPUTE_QUEUE, startInvoiceComputeWorker } from './compute-job.js'
export { subscriptionInvoicing } from './subscription-invoicing.js'
export { endDueTrials } from './trial-end-due.js'
export { kafkaIngestWatermark, noWatermark } from './ingest-watermark.js'
export type { KafkaWatermark } from './ingest-watermark.js'
export { runBilling } from './bill-due.js'
export { billingRunView, listBillingRuns, readBillingRun } from './billing-runs.js'
export type { BillingRun, BillingRunView } from './billing-runs.js'
export { recomputeLateUsage } from './late-usage.js'
