// A paid wallet top-up invoice: the wallet is credited (invoiced mode) and its alert re-evaluated
// (auto-topup.ts). Called by invoices/payments.ts when a payment completes an invoice.
import { LockMode } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import type { Invoice } from '../invoices/invoice.entity.js'
import { AUTO_TOPUP_REASON, balanceOf, creditTopUp, raiseAlert } from './auto-topup.js'
import { topUpWallet } from './ledger.js'
import { WalletSchema } from './wallet.entity.js'

/**
 * Called in the payment's transaction (invoice row locked) when a payment completes an invoice
 * (SUCCEEDED or OVERPAID). For a wallet top-up invoice: credits the wallet (invoiced mode) and
 * re-evaluates the alert; any other invoice is left alone.
 */
export async function onInvoicePaid(ctx: BillingContext, tx: EntityManager, invoice: Invoice): Promise<void> {
  if (invoice.billing_reason !== AUTO_TOPUP_REASON || !invoice.metadata?.wallet_id) return
  const scope: Scope = { tenant_id: invoice.tenant_id, environment_id: invoice.environment_id }
  const walletId = invoice.metadata.wallet_id
  const locked = await tx.findOne(WalletSchema, { id: walletId, ...scope, status: 'published' }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true })
  if (!locked) return // the wallet is gone: the payment stands, there is nothing to credit
  const ax = { clock: ctx.clock, billing: ctx, topUp: topUpWallet }
  await creditTopUp(ax, tx, scope, locked, invoice.id, invoice.metadata.credits)
  // Reloaded: the credit's own hook may have re-armed it.
  const wallet = (await tx.findOne(WalletSchema, { id: walletId, ...scope }, { refresh: true }))!
  if (wallet.alert_threshold === null) return
  const balance = await balanceOf(tx, ctx.clock, scope, wallet)
  if (balance.gte(wallet.alert_threshold)) {
    wallet.alert_state = 'armed'
    await tx.flush()
    return
  }
  await raiseAlert(ax, tx, scope, wallet, balance.toString(), 'payment')
}
