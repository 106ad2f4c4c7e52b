// Response schemas of the wallet routes (registered by module.ts, referred to by $id).
import { alwaysNull, dateTimeOrNull, integerOrNull, objectOf, recordSchema, ref, str, stringOrNull, bool, money } from '../http/response-schemas.js'

export const walletSchema = recordSchema('Wallet', {
  customer_id: str,
  currency: str,
  name: stringOrNull,
  description: stringOrNull,
  wallet_type: str,
  conversion_rate: str,
  /** in credits */
  balance: str,
  /** balance x conversion_rate, rounded half-up to the currency */
  currency_balance: money,
  /** null when not set; threshold in credits */
  balance_alert: objectOf({ threshold: str, state: str }, { nullable: true }),
  /** null when not set; amount in credits */
  auto_topup: objectOf({ enabled: bool, amount: stringOrNull, mode: stringOrNull }, { nullable: true }),
  /** active while published, else closed */
  wallet_status: str,
  /** the balance in credits, under Flexprice's name */
  credit_balance: str,
  // Flexprice's alert and wallet config objects and its breakdown of available credits have no
  // counterpart here (balance_alert and auto_topup above): null for clients that require the keys
  alert_settings: alwaysNull,
  alert_state: alwaysNull,
  config: alwaysNull,
  credits_available_breakdown: alwaysNull,
  topup_conversion_rate: alwaysNull,
})

export const walletTransactionSchema = recordSchema('WalletTransaction', {
  wallet_id: str,
  customer_id: str,
  type: str,
  transaction_reason: stringOrNull,
  credit_amount: str,
  credits_available: str,
  credits_unfunded: str,
  amount: str,
  conversion_rate: str,
  expiry_date: dateTimeOrNull,
  priority: integerOrNull,
  idempotency_key: stringOrNull,
  reference: stringOrNull,
  /** debits: the credit transactions they consumed */
  consumed: { type: 'array', items: objectOf({ credit_tx_id: str, credits: str }) },
  // not kept on a ledger row (reference above; a row is written complete) or not expanded: null
  // for clients that require the keys
  currency: alwaysNull,
  description: alwaysNull,
  reference_id: alwaysNull,
  reference_type: alwaysNull,
  transaction_status: alwaysNull,
  topup_conversion_rate: alwaysNull,
  credit_balance_before: alwaysNull,
  credit_balance_after: alwaysNull,
  created_by_user: alwaysNull,
  customer: alwaysNull,
  wallet: alwaysNull,
})

/** A top-up or debit: the transaction and the wallet after it. */
export const ledgerResultSchema = objectOf({ transaction: ref('WalletTransaction'), wallet: ref('Wallet') })

/**
 * A top-up's answer: the ledger result, its transaction also under Flexprice's name
 * (`wallet_transaction`), and `invoice_id`, null: a top-up through the API is not invoiced
 * (PURCHASED_CREDIT_INVOICED is refused; invoiced top-ups are the automatic ones).
 */
export const topUpResultSchema = objectOf({
  transaction: ref('WalletTransaction'), wallet_transaction: ref('WalletTransaction'), wallet: ref('Wallet'), invoice_id: alwaysNull,
})

export const walletModificationSchema = objectOf({ original: ref('Wallet'), updated: ref('Wallet') })
