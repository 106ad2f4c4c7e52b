// Wallet termination (POST /wallets/{id}/terminate): the wallet is closed (status archived,
// wallet_status "closed") and what is left of its credits is forfeited, not paid out: Meterline
// records money, it does not move it, so a refund of purchased credits is the operator's own
// decision (a refund of the top-up invoice, payments/). Each credit row with credits left gets
// one 'expiry' row, reason WALLET_TERMINATED, key terminate:<credit id>, so the ledger still
// balances and the balance reads 0. A wallet below zero (a POSTPAID wallet that owes) is not
// closed: what it owes would disappear with it.
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError } from '../../platform/errors.js'
import type { Clock } from '../../platform/clock.js'
import type { Scope } from '../db/scope.js'
import { publishSystemEvent } from '../events/index.js'
import { D } from '../pricing/index.js'
import { forfeitRow } from './ledger.js'
import { serializeTransaction, serializeWallet } from './serialize.js'
import { lockWallet, withBalances, type WalletView } from './wallet-rows.js'
import { WalletTransactionSchema, type Wallet } from './wallet.entity.js'

export async function terminateWallet(em: EntityManager, clock: Clock, scope: Scope, userId: string, id: string): Promise<WalletView> {
  return em.transactional(async (tx) => {
    const wallet = await lockWallet(tx, scope, id)
    const [{ balance }] = await withBalances(tx, clock, scope, [wallet])
    if (balance.isNegative()) throw new InvalidOperationError(`wallet ${id} is at ${balance.toString()} credits: settle what it owes before terminating it`)
    const forfeited = await forfeitCredits(tx, scope, wallet, userId)
    wallet.status = 'archived'
    wallet.updated_by = userId
    await tx.flush()
    for (const row of forfeited) {
      publishSystemEvent(tx, scope, { event_name: 'wallet.transaction_created', entity_type: 'wallet_transaction', entity_id: row.id, payload: serializeTransaction(row) })
    }
    const view = { wallet, balance: new D(0) }
    publishSystemEvent(tx, scope, { event_name: 'wallet.terminated', entity_type: 'wallet', entity_id: wallet.id, payload: serializeWallet(wallet, view.balance) })
    return view
  })
}

/** One expiry row per credit row that still has credits, and those credits set to 0. */
async function forfeitCredits(tx: EntityManager, scope: Scope, wallet: Wallet, userId: string) {
  const credits = await tx.find(
    WalletTransactionSchema,
    { ...scope, wallet_id: wallet.id, type: 'credit', credits_available: { $gt: '0' } },
    { orderBy: { created_at: 'asc', id: 'asc' }, refresh: true },
  )
  return credits.map((credit) =>
    forfeitRow(tx, scope, wallet, credit, { userId, key: `terminate:${credit.id}`, metadata: { terminated_credit_tx_id: credit.id }, reason: 'WALLET_TERMINATED' }))
}
