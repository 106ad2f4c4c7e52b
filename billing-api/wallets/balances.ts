// The derived balance: a wallet's spendable credits are the remaining credits_available of its
// unexpired credit transactions, minus the shortfall its POSTPAID debits went below zero
// (credits_unfunded). Nothing stores a balance, so nothing can drift from the ledger.
import type { Decimal } from 'decimal.js'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { D } from '../pricing/index.js'

const BALANCE_SQL = `
  SELECT wallet_id,
         coalesce(sum(credits_available) FILTER (WHERE type = 'credit' AND (expiry_date IS NULL OR expiry_date > ?)), 0)
       - coalesce(sum(credits_unfunded) FILTER (WHERE type = 'debit'), 0) AS balance
    FROM wallet_transactions
   WHERE tenant_id = ? AND environment_id = ? AND wallet_id IN (?)
   GROUP BY wallet_id`

/** Balance (credits) of each wallet at `now`; runs in the caller's transaction when there is one. */
export async function balancesOf(em: EntityManager, scope: Scope, walletIds: string[], now: Date): Promise<Map<string, Decimal>> {
  const out = new Map<string, Decimal>(walletIds.map((id) => [id, new D(0)]))
  if (walletIds.length === 0) return out
  const rows = await em
    .getConnection()
    .execute(BALANCE_SQL, [now, scope.tenant_id, scope.environment_id, walletIds], 'all', em.getTransactionContext())
  for (const r of rows as { wallet_id: string; balance: string }[]) out.set(r.wallet_id, new D(r.balance))
  return out
}
