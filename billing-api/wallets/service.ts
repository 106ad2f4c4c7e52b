// Wallet use cases: create (with wallet.created), get, list, modify (prepaid_to_postpaid).
// Every answer carries the wallet's derived balance.
import type { FilterQuery } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, InvalidOperationError, ValidationError } from '../../platform/errors.js'
import type { Clock } from '../../platform/clock.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import type { Metadata } from '../db/common.js'
import { publishSystemEvent } from '../events/index.js'
import type { Page } from '../http/schemas.js'
import { D } from '../pricing/index.js'
import { serializeWallet } from './serialize.js'
import { nextSettings, type WalletSettingsInput } from './settings.js'
import { findWallet, lockWallet, withBalances, type WalletView } from './wallet-rows.js'
import { WalletSchema, type Wallet, type WalletType } from './wallet.entity.js'
import { publishedBy } from '../db/scoped-records.js'

export interface WalletInput {
  customer_id: string
  currency: string
  name?: string
  description?: string
  /** Flexprice's SDK sends "0": a wallet starts empty here (credits come by top-up), so only zero is accepted */
  initial_credits_to_load?: string
  wallet_type?: WalletType
  conversion_rate?: string
  metadata?: Metadata
  balance_alert?: WalletSettingsInput['balance_alert']
  auto_topup?: WalletSettingsInput['auto_topup']
}

export const MODIFICATION_TYPES = ['prepaid_to_postpaid'] as const
export type ModificationType = (typeof MODIFICATION_TYPES)[number]
const isModificationType = (v: string): v is ModificationType => (MODIFICATION_TYPES as readonly string[]).includes(v)

export async function createWallet(em: EntityManager, clock: Clock, scope: Scope, userId: string, input: WalletInput): Promise<WalletView> {
  const rate = input.conversion_rate ?? '1'
  if (!new D(rate).gt(0)) throw new ValidationError('conversion_rate must be greater than 0', 'conversion_rate')
  if (input.initial_credits_to_load !== undefined && !new D(input.initial_credits_to_load).isZero()) {
    throw new ValidationError('initial_credits_to_load: a wallet is created empty; add credits with POST /wallets/{id}/top-up', 'initial_credits_to_load')
  }
  return em.transactional(async (tx) => {
    const customer = await tx.findOne(CustomerSchema, { id: input.customer_id, ...scope, status: { $ne: 'deleted' } })
    if (!customer) throw new ValidationError(`customer_id: customer ${input.customer_id} not found`, 'customer_id')
    // The partial unique index settles concurrent creates (409 too); this check names the clash.
    // A closed (terminated) wallet does not hold the currency any more.
    const clash = await tx.findOne(WalletSchema, { ...scope, customer_id: input.customer_id, currency: input.currency, status: 'published' })
    if (clash) throw new AlreadyExistsError(`customer ${input.customer_id} already has a ${input.currency} wallet (${clash.id})`)
    const wallet = tx.create(WalletSchema, {
      id: newId('wallet'),
      ...scope,
      customer_id: input.customer_id,
      currency: input.currency,
      name: input.name ?? `${input.currency} wallet`,
      description: input.description ?? null,
      wallet_type: input.wallet_type ?? 'PREPAID',
      conversion_rate: rate,
      ...nextSettings(
        { alert_threshold: null, alert_state: 'armed', auto_topup_enabled: false, auto_topup_amount: null, auto_topup_mode: null, conversion_rate: rate, currency: input.currency },
        input,
      ),
      ...publishedBy(userId, input.metadata),
    })
    await tx.flush()
    const view = { wallet, balance: new D(0) }
    publishSystemEvent(tx, scope, { event_name: 'wallet.created', entity_type: 'wallet', entity_id: wallet.id, payload: serializeWallet(wallet, view.balance) })
    return view
  })
}

export async function getWallet(em: EntityManager, clock: Clock, scope: Scope, id: string): Promise<WalletView> {
  const wallet = await findWallet(em, scope, id)
  return (await withBalances(em, clock, scope, [wallet]))[0]
}

export async function pageWallets(
  em: EntityManager, clock: Clock, scope: Scope, q: { customer_id?: string; wallet_ids?: string[] } & Page,
): Promise<{ items: WalletView[]; total: number }> {
  const where: FilterQuery<Wallet> = { ...scope, status: 'published', ...(q.customer_id ? { customer_id: q.customer_id } : {}) }
  if (q.wallet_ids) where.id = { $in: q.wallet_ids }
  const [wallets, total] = await em.findAndCount(WalletSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
  return { items: await withBalances(em, clock, scope, wallets), total }
}

export interface WalletUpdate {
  name?: string
  description?: string | null
  metadata?: Metadata
}

/** PUT /wallets/{id}: what describes the wallet; its money and settings change elsewhere. */
export async function updateWallet(em: EntityManager, clock: Clock, scope: Scope, userId: string, id: string, patch: WalletUpdate): Promise<WalletView> {
  return em.transactional(async (tx) => {
    const wallet = await lockWallet(tx, scope, id)
    if (patch.name !== undefined) wallet.name = patch.name
    if (patch.description !== undefined) wallet.description = patch.description
    if (patch.metadata !== undefined) wallet.metadata = patch.metadata
    wallet.updated_by = userId
    await tx.flush()
    return (await withBalances(tx, clock, scope, [wallet]))[0]
  })
}

/** prepaid_to_postpaid: the only modification (spec); answers the wallet before and after. */
export async function modifyWallet(
  em: EntityManager, clock: Clock, scope: Scope, userId: string, id: string, modification: string,
): Promise<{ original: WalletView; updated: WalletView }> {
  if (!isModificationType(modification)) throw new ValidationError(`modification_type ${modification} is not supported`, 'modification_type')
  return em.transactional(async (tx) => {
    const wallet = await lockWallet(tx, scope, id)
    if (wallet.wallet_type !== 'PREPAID') throw new InvalidOperationError(`wallet ${id} is ${wallet.wallet_type}, not PREPAID`)
    const [original] = await withBalances(tx, clock, scope, [wallet])
    const before = { wallet: { ...wallet }, balance: original.balance }
    wallet.wallet_type = 'POSTPAID'
    wallet.updated_by = userId
    await tx.flush()
    const updated = { wallet, balance: original.balance }
    publishSystemEvent(tx, scope, { event_name: 'wallet.updated', entity_type: 'wallet', entity_id: wallet.id, payload: serializeWallet(wallet, updated.balance) })
    return { original: before, updated }
  })
}
