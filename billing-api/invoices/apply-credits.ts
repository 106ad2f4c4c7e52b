// Finalization step: the customer's PREPAID wallet in the invoice's currency pays what it can of
// the invoice, through the wallet ledger (wallets/ledger.ts debitWallet), so the debit order,
// the conversion rate and metadata.consumed_credit_tx_ids follow the ledger's rules. The debit's
// idempotency key is derived from the invoice id: when a debit with it already exists (a
// finalization retried after the debit committed), its amount is reused and nothing is debited again.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Decimal } from 'decimal.js'
import type { BillingContext } from '../context.js'
import { currencyPrecision, D, toMoneyString } from '../pricing/index.js'
import { creditsToCurrency, balancesOf, debitWallet, lockWallet } from '../wallets/index.js'
import { WalletSchema, WalletTransactionSchema } from '../wallets/wallet.entity.js'
import type { Invoice } from './invoice.entity.js'
import type { FinalizeReads } from './finalize-reads.js'

export const creditsDebitKey = (invoiceId: string): string => `invoice:${invoiceId}:prepaid_credits`

/** Debits up to `payable` from the wallet; returns the amount applied (in the invoice currency). */
export async function applyPrepaidCredits(ctx: BillingContext, tx: EntityManager, invoice: Invoice, payable: Decimal, reads?: FinalizeReads): Promise<Decimal> {
  // the finalization batch read the customers' wallets (finalize-reads.ts): none here
  if (reads?.mayHaveWallet(invoice) === false) return new D(0)
  const scope = { tenant_id: invoice.tenant_id, environment_id: invoice.environment_id }
  const found = await tx.findOne(WalletSchema, {
    ...scope, customer_id: invoice.customer_id, currency: invoice.currency, wallet_type: 'PREPAID', status: 'published',
  })
  if (!found) return new D(0)
  const key = creditsDebitKey(invoice.id)
  // Locked before the balance is read, so the debit below sees the same balance.
  const wallet = await lockWallet(tx, scope, found.id)
  const earlier = await tx.findOne(WalletTransactionSchema, { ...scope, wallet_id: wallet.id, idempotency_key: key }, { refresh: true })
  if (earlier) return new D(toMoneyString(earlier.amount, invoice.currency))
  if (!payable.gt(0)) return new D(0)
  const now = ctx.clock.now()
  const credits = (await balancesOf(tx, scope, [wallet.id], now)).get(wallet.id)!
  // What the credits are worth, rounded down to the currency so the debit never exceeds them.
  const worth = creditsToCurrency(D.max(credits, 0), wallet.conversion_rate).toDecimalPlaces(currencyPrecision(invoice.currency), D.ROUND_DOWN)
  const amount = D.min(payable, worth)
  if (!amount.gt(0)) return new D(0)
  await debitWallet(tx, ctx.clock, scope, null as unknown as string /* system: no user */, wallet.id, {
    amount: amount.toString(), idempotency_key: key, reference: invoice.id, metadata: { invoice_id: invoice.id },
  }, ctx) // ctx (A2): lets a balance alert's auto top-up finalize its invoice at once (wallets/auto-topup.ts)
  return amount
}
