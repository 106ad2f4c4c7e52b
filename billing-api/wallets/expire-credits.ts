// The credit expiry job's use case: every credit whose expiry_date <= now and that still has
// credits_available gets one 'expiry' row for what is left, and its credits_available goes to 0.
//
// Locking: a batch claims WALLETS with FOR UPDATE SKIP LOCKED, the same row lock every top-up and
// debit takes first (service.ts lockWallet), so locks are always taken wallet -> credits and never
// deadlock; two concurrent runs each take different wallets, and a wallet busy with a debit is
// left for the next run. The expiry row's idempotency key expiry:<credit tx id> (unique per
// wallet) makes a second expiry of the same credit impossible.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { forfeitRow } from './ledger.js'
import { serializeTransaction } from './serialize.js'
import { WalletSchema, WalletTransactionSchema, type Wallet } from './wallet.entity.js'

export interface ExpireOptions {
  batchSize?: number
  /** limit the run to one tenant (operators' on-demand runs, tests) */
  tenantId?: string
}

const CLAIM_SQL = (byTenant: boolean) => `
  SELECT w.* FROM wallets w
   WHERE w.status = 'published' ${byTenant ? 'AND w.tenant_id = ?' : ''}
     AND EXISTS (SELECT 1 FROM wallet_transactions t
                  WHERE t.wallet_id = w.id AND t.type = 'credit' AND t.credits_available > 0 AND t.expiry_date <= ?)
   ORDER BY w.id
   LIMIT ?
   FOR UPDATE SKIP LOCKED`

/** Returns the number of credits expired. */
export async function expireWalletCredits(ctx: BillingContext, opts: ExpireOptions = {}): Promise<number> {
  const batchSize = opts.batchSize ?? 100
  let expired = 0
  for (;;) {
    const now = ctx.clock.now()
    const claimed = await ctx.orm.em.fork().transactional(async (tx) => {
      const params = [...(opts.tenantId ? [opts.tenantId] : []), now, batchSize]
      const rows = await tx.getConnection().execute(CLAIM_SQL(!!opts.tenantId), params, 'all', tx.getTransactionContext())
      for (const row of rows) expired += await expireWallet(tx, tx.map(WalletSchema, row), now)
      return rows.length
    })
    if (claimed === 0) return expired
  }
}

async function expireWallet(tx: EntityManager, wallet: Wallet, now: Date): Promise<number> {
  const scope = { tenant_id: wallet.tenant_id, environment_id: wallet.environment_id }
  const due = await tx.find(
    WalletTransactionSchema,
    { ...scope, wallet_id: wallet.id, type: 'credit', credits_available: { $gt: '0' }, expiry_date: { $lte: now } },
    { orderBy: { expiry_date: 'asc', id: 'asc' }, refresh: true },
  )
  const rows = due.map((credit) =>
    forfeitRow(tx, scope, wallet, credit, { userId: null, key: `expiry:${credit.id}`, metadata: { expired_credit_tx_id: credit.id }, reason: 'CREDIT_EXPIRED' }))
  await tx.flush()
  for (const expiry of rows) {
    publishSystemEvent(tx, scope, { event_name: 'wallet.transaction_created', entity_type: 'wallet_transaction', entity_id: expiry.id, payload: serializeTransaction(expiry) })
  }
  return due.length
}
