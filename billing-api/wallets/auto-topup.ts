// Balance alert and auto top-up (spec: Events, "Wallet auto-top-up").
//
// Every hook here runs inside a ledger transaction that already holds the wallet's row lock
// (wallet-rows.ts lockWallet), so two debits of one wallet can never both fire an alert or both
// create a top-up.
//
// - Alert: the wallet's alert is 'armed' until a debit leaves the balance (credits) below
//   alert_threshold; then wallet.balance_alert is published once and the alert is 'alerted'.
//   Further debits publish nothing. A credit that lifts the balance back to the threshold or
//   above re-arms it silently. When a purchased-credit payment completes (a paid top-up
//   invoice), the alert is re-evaluated: re-armed if the balance is back at the threshold,
//   otherwise published again (and a new top-up may fire).
// - Auto top-up fires with the alert, for auto_topup_amount credits:
//   - invoiced: a ONE_OFF invoice (billing_reason WALLET_AUTO_TOPUP, metadata.wallet_id and
//     .credits) is created and finalized; the wallet is credited (PURCHASED) when that invoice
//     is paid. While a top-up invoice of the wallet is DRAFT or FINALIZED and not paid, no
//     other top-up is created (the alert is still published).
//   - instant: the same invoice is created and finalized, and the wallet is credited at once;
//     its later payment credits nothing more. Unpaid instant invoices do not block.
//   Crediting is keyed `auto_topup:<invoice id>` on the wallet, so it happens exactly once.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Clock } from '../../platform/clock.js'
import { DomainError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { InvoiceSchema, type Invoice } from '../invoices/invoice.entity.js'
import { D, toMoneyString } from '../pricing/index.js'
import { creditsToCurrency } from './allocate.js'
import { balancesOf } from './balances.js'
import { WalletTransactionSchema, type Wallet } from './wallet.entity.js'

export const AUTO_TOPUP_ACTOR = 'system:wallet-auto-topup'
export const AUTO_TOPUP_REASON = 'WALLET_AUTO_TOPUP'

/**
 * What the hooks need: the clock, the billing context whose invoicing creates and finalizes a
 * top-up invoice, and the ledger's credit (ledger.ts topUpWallet, handed in by the ledger that
 * calls these hooks, so the two files do not import each other).
 */
export interface AlertContext {
  clock: Clock
  billing: BillingContext
  topUp: TopUp
}

export type TopUp = (
  tx: EntityManager, clock: Clock, scope: Scope, userId: string, walletId: string,
  input: { credits: string; transaction_reason: 'PURCHASED'; idempotency_key: string; metadata: Record<string, string> },
) => Promise<unknown>

const topUpKey = (invoiceId: string) => `auto_topup:${invoiceId}`

export async function balanceOf(tx: EntityManager, clock: Clock, scope: Scope, wallet: Wallet) {
  return (await balancesOf(tx, scope, [wallet.id], clock.now())).get(wallet.id)!
}

/** After a debit (wallet locked, row flushed). Returns true when an instant top-up credited the wallet. */
export async function afterDebit(ax: AlertContext, tx: EntityManager, scope: Scope, wallet: Wallet): Promise<boolean> {
  if (wallet.alert_threshold === null || wallet.alert_state !== 'armed') return false
  const balance = await balanceOf(tx, ax.clock, scope, wallet)
  if (balance.gte(wallet.alert_threshold)) return false
  return raiseAlert(ax, tx, scope, wallet, balance.toString(), 'debit')
}

/** After any credit (wallet locked, row flushed): re-arms an alerted wallet whose balance is restored. */
export async function afterCredit(clock: Clock, tx: EntityManager, scope: Scope, wallet: Wallet): Promise<void> {
  if (wallet.alert_threshold === null || wallet.alert_state !== 'alerted') return
  const balance = await balanceOf(tx, clock, scope, wallet)
  if (balance.gte(wallet.alert_threshold)) {
    wallet.alert_state = 'armed'
    await tx.flush()
  }
}

/** What the alert's auto top-up did; carried in the wallet.balance_alert payload. */
export type TopUpOutcome =
  | { outcome: 'created'; invoice_id: string; invoice_status: string; credited: boolean }
  | { outcome: 'blocked'; pending_invoice_id: string }
  | { outcome: 'failed'; error: string }

export async function raiseAlert(ax: AlertContext, tx: EntityManager, scope: Scope, wallet: Wallet, balance: string, cause: 'debit' | 'payment'): Promise<boolean> {
  wallet.alert_state = 'alerted'
  // Flushed now: nested ledger calls reload the wallet row (refresh) and must see 'alerted'.
  await tx.flush()
  const topUp = wallet.auto_topup_enabled ? await autoTopUp(ax, tx, scope, wallet) : null
  publishSystemEvent(tx, scope, {
    event_name: 'wallet.balance_alert', entity_type: 'wallet', entity_id: wallet.id,
    payload: {
      wallet_id: wallet.id, customer_id: wallet.customer_id, currency: wallet.currency, cause,
      balance: new D(balance).toString(), threshold: new D(wallet.alert_threshold!).toString(),
      auto_topup: topUp,
    },
  })
  await tx.flush()
  return topUp?.outcome === 'created' && topUp.credited
}

/** The wallet's top-up invoice that is DRAFT or FINALIZED and not paid, if any. */
export async function pendingTopUpInvoice(tx: EntityManager, scope: Scope, wallet: Wallet): Promise<Invoice | null> {
  return tx.findOne(InvoiceSchema, {
    ...scope, customer_id: wallet.customer_id, billing_reason: AUTO_TOPUP_REASON, status: { $ne: 'deleted' },
    invoice_status: { $in: ['DRAFT', 'FINALIZED'] }, payment_status: { $nin: ['SUCCEEDED', 'OVERPAID'] },
    metadata: { wallet_id: wallet.id },
  })
}

/**
 * Creates (and finalizes, and in instant mode credits) the top-up in a savepoint. A domain error
 * (e.g. the customer was archived) rolls back only the top-up: the debit that fired the alert
 * stands, and the alert's payload reports the failure.
 */
async function autoTopUp(ax: AlertContext, tx: EntityManager, scope: Scope, wallet: Wallet): Promise<TopUpOutcome> {
  const mode = wallet.auto_topup_mode!
  if (mode === 'invoiced') {
    const pending = await pendingTopUpInvoice(tx, scope, wallet)
    if (pending) return { outcome: 'blocked', pending_invoice_id: pending.id }
  }
  const credits = new D(wallet.auto_topup_amount!)
  try {
    return await tx.transactional(async (sp) => {
      const invoice = await ax.billing.topUpInvoicing.createFinalized(ax.billing, sp, scope, AUTO_TOPUP_ACTOR, {
        customer_id: wallet.customer_id, currency: wallet.currency, billing_reason: AUTO_TOPUP_REASON,
        line: {
          display_name: `Wallet top-up: ${credits.toString()} credits`,
          amount: toMoneyString(creditsToCurrency(credits, wallet.conversion_rate), wallet.currency),
          quantity: credits.toString(),
        },
        description: `Automatic top-up of wallet ${wallet.name}`,
        metadata: { wallet_id: wallet.id, credits: credits.toString(), auto_topup_mode: mode },
      })
      const credited = mode === 'instant' && (await creditTopUp(ax, sp, scope, wallet, invoice.id, credits.toString()))
      return { outcome: 'created' as const, invoice_id: invoice.id, invoice_status: invoice.invoice_status, credited }
    })
  } catch (err) {
    if (!(err instanceof DomainError)) throw err
    return { outcome: 'failed', error: `${err.code}: ${err.message}` }
  }
}

/** Credits the invoice's credits as PURCHASED, once per invoice. Returns false when already credited. */
export async function creditTopUp(ax: AlertContext, tx: EntityManager, scope: Scope, wallet: Wallet, invoiceId: string, credits: string): Promise<boolean> {
  const key = topUpKey(invoiceId)
  const done = await tx.findOne(WalletTransactionSchema, { ...scope, wallet_id: wallet.id, idempotency_key: key })
  if (done) return false
  await ax.topUp(tx, ax.clock, scope, AUTO_TOPUP_ACTOR, wallet.id, {
    credits, transaction_reason: 'PURCHASED', idempotency_key: key,
    metadata: { invoice_id: invoiceId, source: 'auto_topup' },
  })
  return true
}
