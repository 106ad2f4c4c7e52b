// The subscriptions domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { activateIncompleteSubscription } from './activate-incomplete.js'
export { billsOwnInvoices, invoiceParties, usageCustomersByWindow } from './hierarchy.js'
export type { InvoiceLineRow, SubscriptionInvoiceRow, SubscriptionInvoicing } from './invoicing.js'
export { serializeSubscription, subscriptionV2Routes } from './routes.js'
export { getSubscription } from './service.js'
export { advancePeriod, startPaidBilling, terminateSubscription } from './terminate.js'
// subscription phases (billing-api/subscription-phases) switch line items as a plan change does
export { assertUsageInArrear } from './line-set-change.js'
export { createModificationInvoice, periodAmount, prorates } from './modify.js'
export type { ModificationLine } from './modify.js'
export { eventPayload, lockSubscription } from './service.js'
