// Balance alert and auto top-up settings of a wallet: validation (pure), the update use case
// and the wire form. What the settings do is in auto-topup.ts.
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import type { Clock } from '../../platform/clock.js'
import type { Scope } from '../db/scope.js'
import { publishSystemEvent } from '../events/index.js'
import { D, toMoneyString } from '../pricing/index.js'
import { creditsToCurrency } from './allocate.js'
import { serializeWallet } from './serialize.js'
import { lockWallet, withBalances, type WalletView } from './wallet-rows.js'
import { decimalString, nonNegativeDecimalString } from '../http/schemas.js'
import { AUTO_TOPUP_MODES, type AutoTopUpMode, type Wallet } from './wallet.entity.js'

export interface WalletSettingsInput {
  /** null removes the alert (and is refused while auto top-up is enabled) */
  balance_alert?: { threshold: string } | null
  /** replaced whole; null removes it */
  auto_topup?: { enabled: boolean; amount?: string; mode?: AutoTopUpMode } | null
}

/** Body properties of POST /wallets and PUT /wallets/{id}/settings. */
export const walletSettingsProperties = {
  balance_alert: {
    anyOf: [
      { type: 'object', required: ['threshold'], additionalProperties: false, properties: { threshold: decimalString } },
      { type: 'null' },
    ],
  },
  auto_topup: {
    anyOf: [
      {
        type: 'object',
        required: ['enabled'],
        additionalProperties: false,
        properties: { enabled: { type: 'boolean' }, amount: nonNegativeDecimalString, mode: { type: 'string', enum: AUTO_TOPUP_MODES } },
      },
      { type: 'null' },
    ],
  },
} as const

type SettingsColumns = Pick<Wallet, 'alert_threshold' | 'alert_state' | 'auto_topup_enabled' | 'auto_topup_amount' | 'auto_topup_mode' | 'conversion_rate' | 'currency'>

/**
 * The settings columns after applying `input` to `current`. Any change re-arms the alert. The
 * top-up amount is in credits; its invoice charges amount x conversion_rate rounded half-up to the
 * currency, which must be more than zero.
 */
export function nextSettings(current: SettingsColumns, input: WalletSettingsInput): Omit<SettingsColumns, 'conversion_rate' | 'currency'> {
  const next = {
    alert_threshold: current.alert_threshold,
    alert_state: current.alert_state,
    auto_topup_enabled: current.auto_topup_enabled,
    auto_topup_amount: current.auto_topup_amount,
    auto_topup_mode: current.auto_topup_mode,
  }
  if (input.balance_alert !== undefined) next.alert_threshold = input.balance_alert === null ? null : D(input.balance_alert.threshold).toString()
  if (input.auto_topup !== undefined) {
    const t = input.auto_topup
    next.auto_topup_enabled = t?.enabled ?? false
    next.auto_topup_amount = t?.amount !== undefined ? D(t.amount).toString() : null
    next.auto_topup_mode = t?.mode ?? null
  }
  if (next.auto_topup_amount !== null) {
    const money = toMoneyString(creditsToCurrency(next.auto_topup_amount, current.conversion_rate), current.currency)
    if (!D(money).gt(0)) throw new ValidationError(`auto_topup.amount must be worth more than 0 ${current.currency}`, 'auto_topup.amount')
  }
  if (next.auto_topup_enabled) {
    if (next.alert_threshold === null) throw new ValidationError('auto_topup needs balance_alert.threshold: the top-up fires on the balance alert', 'balance_alert')
    if (next.auto_topup_amount === null) throw new ValidationError('auto_topup.amount is required when auto_topup is enabled', 'auto_topup.amount')
    if (next.auto_topup_mode === null) throw new ValidationError('auto_topup.mode is required when auto_topup is enabled', 'auto_topup.mode')
  }
  if (input.balance_alert !== undefined || input.auto_topup !== undefined) next.alert_state = 'armed'
  return next
}

/** PUT /wallets/{id}/settings; publishes wallet.updated. */
export async function updateWalletSettings(
  em: EntityManager, clock: Clock, scope: Scope, userId: string, id: string, input: WalletSettingsInput,
): Promise<WalletView> {
  return em.transactional(async (tx) => {
    const wallet = await lockWallet(tx, scope, id)
    Object.assign(wallet, nextSettings(wallet, input), { updated_by: userId })
    await tx.flush()
    const [view] = await withBalances(tx, clock, scope, [wallet])
    publishSystemEvent(tx, scope, { event_name: 'wallet.updated', entity_type: 'wallet', entity_id: wallet.id, payload: serializeWallet(wallet, view.balance) })
    return view
  })
}
