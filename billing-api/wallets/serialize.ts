import type { Decimal } from 'decimal.js'
import { iso, serializeBase, pick } from '../db/common.js'
import { D, toMoneyString } from '../pricing/index.js'
import { creditsToCurrency } from './allocate.js'
import type { Wallet, WalletTransaction } from './wallet.entity.js'

/** numeric columns come back with their stored scale ("10.000"); the wire shows "10". */
const dec = (v: string | Decimal) => new D(v).toString()

/** balance in credits; currency_balance = balance x conversion_rate, rounded half-up to the currency. */
export function serializeWallet(w: Wallet, balance: Decimal) {
  return {
    ...serializeBase(w),
    ...pick(w, ['customer_id', 'currency', 'name', 'wallet_type']),
    description: w.description ?? null,
    conversion_rate: dec(w.conversion_rate),
    balance: dec(balance),
    currency_balance: toMoneyString(creditsToCurrency(balance, w.conversion_rate), w.currency),
    ...serializeSettings(w),
    wallet_status: w.status === 'published' ? 'active' : 'closed',
    credit_balance: dec(balance),
    alert_settings: null, alert_state: null, config: null, credits_available_breakdown: null, topup_conversion_rate: null,
  }
}

/** Balance alert (threshold in credits; state armed or alerted) and auto top-up (amount in credits); null when not set. */
export function serializeSettings(w: Wallet) {
  return {
    balance_alert: w.alert_threshold == null ? null : { threshold: dec(w.alert_threshold), state: w.alert_state ?? 'armed' },
    auto_topup: w.auto_topup_amount == null && !w.auto_topup_enabled
      ? null
      : { enabled: w.auto_topup_enabled ?? false, amount: w.auto_topup_amount == null ? null : dec(w.auto_topup_amount), mode: w.auto_topup_mode ?? null },
  }
}

export function serializeTransaction(t: WalletTransaction) {
  return {
    ...serializeBase(t),
    ...pick(t, ['wallet_id', 'customer_id', 'type', 'transaction_reason']),
    credit_amount: dec(t.credit_amount),
    credits_available: dec(t.credits_available),
    credits_unfunded: dec(t.credits_unfunded),
    amount: dec(t.amount),
    conversion_rate: dec(t.conversion_rate),
    expiry_date: iso(t.expiry_date),
    ...pick(t, ['priority', 'idempotency_key', 'reference']),
    consumed: (t.consumed ?? []).map((c) => ({ credit_tx_id: c.credit_tx_id, credits: dec(c.credits) })),
    currency: null, description: null, reference_id: null, reference_type: null, transaction_status: null, topup_conversion_rate: null,
    credit_balance_before: null, credit_balance_after: null, created_by_user: null, customer: null, wallet: null,
  }
}
