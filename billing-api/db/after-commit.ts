// Runs a side effect (a metric) only once the transaction of `em` has committed: a rolled back
// change is never counted. Outside a transaction the change is already written: it runs now.
// MikroORM tells commits and rollbacks of the outermost transaction to AfterCommitSubscriber,
// which openOrm (orm.ts) registers; a savepoint's effects wait for the outermost commit.
import type { EntityManager, EventSubscriber, Knex, TransactionEventArgs } from '@mikro-orm/postgresql'

const pending = new WeakMap<object, (() => void)[]>()

export function afterCommit(em: EntityManager, effect: () => void): void {
  let trx = em.getTransactionContext<Knex.Transaction>()
  if (!trx) {
    effect()
    return
  }
  while (trx.parentTransaction) trx = trx.parentTransaction
  const effects = pending.get(trx)
  if (effects) effects.push(effect)
  else pending.set(trx, [effect])
}

export class AfterCommitSubscriber implements EventSubscriber {
  afterTransactionCommit(args: TransactionEventArgs): void {
    const trx = transactionOf(args)
    if (!trx) return
    const effects = pending.get(trx)
    pending.delete(trx)
    for (const effect of effects ?? []) effect()
  }

  afterTransactionRollback(args: TransactionEventArgs): void {
    const trx = transactionOf(args)
    if (trx) pending.delete(trx)
  }
}

/** MikroORM types the transaction as `any`; it is the knex transaction, a callable object. */
function transactionOf(args: TransactionEventArgs): object | undefined {
  const trx: unknown = args.transaction
  return (typeof trx === 'object' || typeof trx === 'function') && trx !== null ? trx : undefined
}
