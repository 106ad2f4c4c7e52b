// Reading and locking wallet rows, with their balances: what every wallet use case starts from.
import type { Decimal } from 'decimal.js'
import { LockMode } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError, NotFoundError } from '../../platform/errors.js'
import type { Clock } from '../../platform/clock.js'
import type { Scope } from '../db/scope.js'
import { balancesOf } from './balances.js'
import { WalletSchema, type Wallet } from './wallet.entity.js'

export interface WalletView {
  wallet: Wallet
  balance: Decimal
}

/** A live or closed (terminated, status archived) wallet: both are readable with their ledger. */
export async function findWallet(em: EntityManager, scope: Scope, id: string): Promise<Wallet> {
  const wallet = await em.findOne(WalletSchema, { id, ...scope, status: { $in: ['published', 'archived'] } })
  if (!wallet) throw new NotFoundError('wallet', id)
  return wallet
}

/**
 * SELECT ... FOR UPDATE on the wallet row: every ledger write takes it first, so writes to one
 * wallet (top-ups, debits, expiry, modify) run one at a time and always see each other's rows.
 */
export async function lockWallet(tx: EntityManager, scope: Scope, id: string): Promise<Wallet> {
  const wallet = await tx.findOne(WalletSchema, { id, ...scope, status: { $in: ['published', 'archived'] } }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true })
  if (!wallet) throw new NotFoundError('wallet', id)
  if (wallet.status !== 'published') throw new InvalidOperationError(`wallet ${id} is closed (terminated): it takes no more credits or debits`)
  return wallet
}

export async function withBalances(em: EntityManager, clock: Clock, scope: Scope, wallets: Wallet[]): Promise<WalletView[]> {
  const balances = await balancesOf(em, scope, wallets.map((w) => w.id), clock.now())
  return wallets.map((wallet) => ({ wallet, balance: balances.get(wallet.id)! }))
}
