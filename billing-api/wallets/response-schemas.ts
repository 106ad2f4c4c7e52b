// Response schemas of the wallet routes (registered by module.ts, referred to by $id).
import { dateTimeOrNull, integerOrNull, objectOf, recordSchema, ref, str, stringOrNull, bool, money } from '../http/response-schemas.js'

export const walletSchema = recordSchema('Wallet', {
  customer_id: str,
  currency: str,
  name: stringOrNull,
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
})

/** A top-up or debit: the transaction and the wallet after it. */
export const ledgerResultSchema = objectOf({ transaction: ref('WalletTransaction'), wallet: ref('Wallet') })

export const walletModificationSchema = objectOf({ original: ref('Wallet'), updated: ref('Wallet') })
