// The payments domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { paymentFailureReporting, recordPaymentFailure } from './payment-failures.js'
export type { PaymentFailureInput } from './payment-failures.js'
export { createPaymentRetryQueue, startPaymentRetryWorker } from './retry-queue.js'
