// Wallet auto top-up invoices (the context's TopUpInvoicing, wired in scripts/composition-root.ts): a
// ONE_OFF invoice created and finalized in the caller's transaction.
import type { TopUpInvoicing } from '../context.js'
import { finalizeLockedInvoice, lockInvoice } from './lifecycle.js'
import { createManualInvoice, type ManualInvoiceInput } from './manual-invoices.js'

export const topUpInvoicing: TopUpInvoicing = {
  async createFinalized(ctx, tx, scope, actor, input) {
    const { invoice } = await createManualInvoice(tx, ctx.clock, scope, actor, {
      customer_id: input.customer_id, invoice_type: 'ONE_OFF', currency: input.currency,
      billing_reason: input.billing_reason as ManualInvoiceInput['billing_reason'],
      line_items: [input.line], description: input.description, metadata: input.metadata,
    })
    const finalized = await finalizeLockedInvoice(ctx, tx, await lockInvoice(tx, scope, invoice.id))
    return { id: invoice.id, invoice_status: finalized.invoice_status }
  },
}
