// Ledger use cases: top-up (a credit row) and debit (a debit row consuming credits). Both run in
// one transaction that first locks the wallet row (lockWallet), then checks the idempotency key,
// so concurrent requests on a wallet are applied one at a time: debits never overdraw a PREPAID
// wallet and a repeated key is refused with 409 (spec Errors 2) without applying anything. The
// unique index (wallet_id, idempotency_key) backs the check up.
import type { Decimal } from 'decimal.js'
import type { FilterQuery } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, InvalidOperationError, ValidationError } from '../../platform/errors.js'
import type { Clock } from '../../platform/clock.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { Metadata } from '../db/common.js'
import { publishSystemEvent } from '../events/index.js'
import type { Page } from '../http/schemas.js'
import { D } from '../pricing/index.js'
import type { BillingContext } from '../context.js'
import { afterCredit, afterDebit } from './auto-topup.js'
import { allocateDebit, creditsToCurrency, debitCreditsForAmount, topUpCreditsForAmount } from './allocate.js'
import { serializeTransaction } from './serialize.js'
import { findWallet, lockWallet, withBalances, type WalletView } from './wallet-rows.js'
import { WalletTransactionSchema, type CreditReason, type TransactionType, type Wallet, type WalletTransaction } from './wallet.entity.js'

/** Exactly one of credits and amount (in the wallet's currency). */
interface Quantity {
  credits?: string
  amount?: string
}

export interface TopUpInput extends Quantity {
  transaction_reason: CreditReason
  expiry_date?: string | null
  priority?: number | null
  idempotency_key: string
  metadata?: Metadata
}

export interface DebitInput extends Quantity {
  idempotency_key: string
  reference?: string
  metadata?: Metadata
}

export interface LedgerResult {
  transaction: WalletTransaction
  wallet: WalletView
}

export async function topUpWallet(em: EntityManager, clock: Clock, scope: Scope, userId: string, walletId: string, input: TopUpInput): Promise<LedgerResult> {
  const now = clock.now()
  const expiry = input.expiry_date ? new Date(input.expiry_date) : null
  if (expiry && expiry.getTime() <= now.getTime()) throw new ValidationError('expiry_date must be in the future', 'expiry_date')
  return em.transactional(async (tx) => {
    const wallet = await lockWallet(tx, scope, walletId)
    await assertKeyUnused(tx, scope, wallet, input.idempotency_key)
    const { credits, amount } = quantityOf(input, wallet, topUpCreditsForAmount)
    const credit = tx.create(WalletTransactionSchema, {
      ...rowBase(scope, wallet, userId, input.idempotency_key, input.metadata ?? {}),
      type: 'credit',
      transaction_reason: input.transaction_reason,
      credit_amount: credits.toString(),
      credits_available: credits.toString(),
      amount: amount.toString(),
      expiry_date: expiry,
      priority: input.priority ?? null,
    })
    const result = await finish(tx, clock, scope, wallet, credit)
    await afterCredit(clock, tx, scope, wallet) // re-arms a balance alert the credit resolved (auto-topup.ts)
    return result
  })
}

/**
 * Consumes credits in debit order (allocate.ts). A PREPAID wallet never goes below zero: a debit
 * larger than its usable credits is refused (400 invalid_operation) and nothing is written. A
 * POSTPAID wallet may: the part no credit covers is recorded on the debit row as credits_unfunded
 * (it consumes no credit) and the derived balance goes negative by that much.
 */
export async function debitWallet(
  em: EntityManager, clock: Clock, scope: Scope, userId: string, walletId: string, input: DebitInput, billing: BillingContext,
): Promise<LedgerResult> {
  return em.transactional(async (tx) => {
    const wallet = await lockWallet(tx, scope, walletId)
    await assertKeyUnused(tx, scope, wallet, input.idempotency_key)
    const { credits, amount } = quantityOf(input, wallet, debitCreditsForAmount)
    const open = await tx.find(
      WalletTransactionSchema,
      { ...scope, wallet_id: wallet.id, type: 'credit', credits_available: { $gt: '0' } },
      { refresh: true },
    )
    const now = clock.now()
    const plan = allocateDebit(open.map((c) => ({ ...c, available: c.credits_available })), credits, now)
    if (plan.shortfall.gt(0) && wallet.wallet_type === 'PREPAID') {
      const usable = credits.minus(plan.shortfall)
      throw new InvalidOperationError(`insufficient balance: wallet ${wallet.id} has ${usable} credits, the debit needs ${credits}`)
    }
    const byId = new Map(open.map((c) => [c.id, c]))
    for (const a of plan.allocations) {
      const c = byId.get(a.id)!
      c.credits_available = new D(c.credits_available).minus(a.credits).toString()
    }
    const debit = tx.create(WalletTransactionSchema, {
      ...rowBase(scope, wallet, userId, input.idempotency_key, {
        ...(input.metadata ?? {}),
        // Metadata values are strings (spec common fields): the ids, comma-separated, in consumption order.
        consumed_credit_tx_ids: plan.allocations.map((a) => a.id).join(','),
      }),
      type: 'debit',
      transaction_reason: 'USAGE',
      credit_amount: credits.toString(),
      credits_unfunded: plan.shortfall.toString(),
      amount: amount.toString(),
      reference: input.reference ?? null,
      consumed: plan.allocations.map((a) => ({ credit_tx_id: a.id, credits: a.credits.toString() })),
    })
    const result = await finish(tx, clock, scope, wallet, debit)
    // Balance alert and auto top-up (auto-topup.ts), invoicing through `billing`.
    if (await afterDebit({ clock, billing, topUp: topUpWallet }, tx, scope, wallet)) return { ...result, wallet: (await withBalances(tx, clock, scope, [wallet]))[0] }
    return result
  })
}

export async function pageTransactions(em: EntityManager, scope: Scope, walletId: string, page: Page): Promise<{ items: WalletTransaction[]; total: number }> {
  const wallet = await findWallet(em, scope, walletId)
  const [items, total] = await em.findAndCount(WalletTransactionSchema, { ...scope, wallet_id: wallet.id }, {
    orderBy: { created_at: 'desc', id: 'desc' }, limit: page.limit, offset: page.offset,
  })
  return { items, total }
}

export interface TransactionFilter extends Page {
  id?: string
  wallet_id?: string
  type?: TransactionType
  transaction_reason?: WalletTransaction['transaction_reason']
}

/** POST /wallets/transactions/search: the environment's ledger rows, newest first. */
export async function searchTransactions(em: EntityManager, scope: Scope, f: TransactionFilter): Promise<{ items: WalletTransaction[]; total: number }> {
  const where: FilterQuery<WalletTransaction> = { ...scope }
  for (const k of ['id', 'wallet_id', 'type', 'transaction_reason'] as const) if (f[k] !== undefined) Object.assign(where, { [k]: f[k] })
  const [items, total] = await em.findAndCount(WalletTransactionSchema, where, { orderBy: { created_at: 'desc', id: 'desc' }, limit: f.limit, offset: f.offset })
  return { items, total }
}

async function assertKeyUnused(tx: EntityManager, scope: Scope, wallet: Wallet, key: string): Promise<void> {
  const used = await tx.findOne(WalletTransactionSchema, { ...scope, wallet_id: wallet.id, idempotency_key: key }, { refresh: true })
  if (used) throw new AlreadyExistsError(`idempotency_key ${key} was already used on wallet ${wallet.id} (transaction ${used.id})`)
}

function quantityOf(input: Quantity, wallet: Wallet, fromAmount: (amount: string, rate: string) => Decimal): { credits: Decimal; amount: Decimal } {
  if ((input.credits === undefined) === (input.amount === undefined)) throw new ValidationError('exactly one of credits and amount is required')
  const credits = input.credits !== undefined ? new D(input.credits) : fromAmount(input.amount!, wallet.conversion_rate)
  const amount = input.amount !== undefined ? new D(input.amount) : creditsToCurrency(credits, wallet.conversion_rate)
  if (!credits.gt(0)) {
    throw new ValidationError(input.credits !== undefined ? 'credits must be greater than 0' : 'amount must be worth more than 0 credits', input.credits !== undefined ? 'credits' : 'amount')
  }
  return { credits, amount }
}

/** The columns every ledger row shares; the caller sets type, reason and amounts. */
export function rowBase(scope: Scope, wallet: Wallet, userId: string | null, key: string, metadata: Metadata) {
  return {
    id: newId('wtx'),
    ...scope,
    wallet_id: wallet.id,
    customer_id: wallet.customer_id,
    credits_available: '0',
    credits_unfunded: '0',
    conversion_rate: wallet.conversion_rate,
    expiry_date: null,
    priority: null,
    idempotency_key: key,
    reference: null,
    consumed: [],
    status: 'published',
    metadata,
    created_by: userId,
    updated_by: userId,
  }
}

/**
 * An expiry row taking what is left of `credit` (expired, or forfeited when its wallet is
 * terminated); the credit has nothing available after it.
 */
export function forfeitRow(tx: EntityManager, scope: Scope, wallet: Wallet, credit: WalletTransaction, how: { userId: string | null; key: string; metadata: Metadata; reason: 'CREDIT_EXPIRED' | 'WALLET_TERMINATED' }): WalletTransaction {
  const row = tx.create(WalletTransactionSchema, {
    ...rowBase(scope, wallet, how.userId, how.key, how.metadata),
    type: 'expiry',
    transaction_reason: how.reason,
    credit_amount: credit.credits_available,
    amount: creditsToCurrency(credit.credits_available, wallet.conversion_rate).toString(),
    consumed: [{ credit_tx_id: credit.id, credits: credit.credits_available }],
  })
  credit.credits_available = '0'
  return row
}

async function finish(tx: EntityManager, clock: Clock, scope: Scope, wallet: Wallet, row: WalletTransaction): Promise<LedgerResult> {
  await tx.flush()
  publishSystemEvent(tx, scope, { event_name: 'wallet.transaction_created', entity_type: 'wallet_transaction', entity_id: row.id, payload: serializeTransaction(row) })
  const [view] = await withBalances(tx, clock, scope, [wallet])
  return { transaction: row, wallet: view }
}

