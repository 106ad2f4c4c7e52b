// The amounts an invoice takes at finalization, in the finalizing transaction and in this order:
// discounts (already on the draft) -> taxes on the discounted amount -> prepaid wallet credits on
// what is left. total = subtotal - total_discount + total_tax; amount_due = total - credits;
// amount_remaining = amount_due - amount_paid. Each line gets its share of the credits
// (prepaid_credits_applied, spread.ts, in proportion to the line's discounted amount).
import type { EntityManager } from '@mikro-orm/postgresql'
import type { BillingContext } from '../context.js'
import { D, toMoneyString } from '../pricing/index.js'
import { applyPrepaidCredits } from './apply-credits.js'
import { applyTaxes } from './apply-taxes.js'
import { InvoiceLineItemSchema, type Invoice } from './invoice.entity.js'
import { spreadOverLines } from './spread.js'
import type { FinalizeReads } from './finalize-reads.js'
import { sumTaxes } from './tax-plan.js'

/** `reads`: the finalization batch's reads (finalize-reads.ts). */
export async function applyFinalAmounts(ctx: BillingContext, tx: EntityManager, invoice: Invoice, reads?: FinalizeReads): Promise<void> {
  const money = (x: Parameters<typeof toMoneyString>[0]) => toMoneyString(x, invoice.currency)
  const now = ctx.clock.now()
  const taxable = D(invoice.subtotal).minus(invoice.total_discount)
  // A refund's credit note (payments/refunds.ts) credits an amount that already includes the refunded invoice's taxes.
  const taxes = invoice.invoice_type === 'CREDIT' && invoice.metadata?.refund_id ? [] : await applyTaxes(tx, invoice, taxable, now, reads)
  const total = taxable.plus(sumTaxes(taxes))
  // A wallet top-up invoice buys credits, and a credit invoice owes nothing: neither is paid from the wallet.
  const payable = invoice.billing_reason === 'WALLET_AUTO_TOPUP' || invoice.invoice_type === 'CREDIT' ? D(0) : D.max(total.minus(invoice.amount_paid), 0)
  const credits = await applyPrepaidCredits(ctx, tx, invoice, payable, reads)
  const due = D.max(total.minus(credits), 0)
  invoice.total_tax = money(sumTaxes(taxes))
  invoice.total = money(total)
  invoice.total_prepaid_credits_applied = money(credits)
  invoice.amount_due = money(due)
  invoice.amount_remaining = money(D.max(due.minus(invoice.amount_paid), 0))
  // Credits paid it all: nothing is left to collect.
  if (credits.gt(0) && due.isZero()) {
    invoice.payment_status = 'SUCCEEDED'
    invoice.paid_at ??= now
  }
  if (credits.gt(0)) {
    const lines = await tx.find(InvoiceLineItemSchema, { invoice_id: invoice.id, tenant_id: invoice.tenant_id, environment_id: invoice.environment_id }, { orderBy: { created_at: 'asc', id: 'asc' } })
    const nets = lines.map((l) => D(l.amount).minus(l.line_item_discount ?? 0).minus(l.invoice_level_discount ?? 0))
    spreadOverLines(credits, nets, invoice.currency).forEach((share, i) => {
      lines[i].prepaid_credits_applied = money(share)
    })
  }
}
