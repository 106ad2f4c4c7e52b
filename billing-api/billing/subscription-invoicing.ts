// Billing's side of the subscription lifecycle's invoicing port (subscriptions/invoicing.ts).
import type { SubscriptionInvoicing } from '../subscriptions/index.js'
import { createProrationInvoice } from './final-invoice.js'
import { invoiceFirstPeriod } from './first-invoice.js'
import { createSubscriptionInvoice } from './subscription-invoice.js'
import { writeSubscriptionInvoice } from './subscription-invoice-rows.js'
import { createTrialInvoice } from './trial-invoice.js'

export const subscriptionInvoicing: SubscriptionInvoicing = {
  invoiceFirstPeriod,
  createTrialInvoice,
  createSubscriptionInvoice,
  createProrationInvoice,
  writeSubscriptionInvoice,
}
