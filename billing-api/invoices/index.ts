// The invoices domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { finalizeDueInvoices } from './finalize-due.js'
export { invoiceIdempotencyKey } from './invoice-keys.js'
export type { BillingReason } from './invoice-keys.js'
export { lockInvoice } from './lifecycle.js'
export type { ChangeOptions } from './lifecycle.js'
export { findLiveInvoice, liveInvoiceWithKey } from './live-invoice.js'
export { createManualInvoice, manualInvoiceKey } from './manual-invoices.js'
export { recordPayment } from './payments.js'
export { invoiceEventPayload, serializeInvoice } from './serialize.js'
export { getInvoice } from './service.js'
export { spreadOverLines } from './spread.js'
export { topUpInvoicing } from './top-up-invoices.js'
