import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, bool, decimal, integer, json, text, timestamp, type BaseRecord } from '../db/common.js'

export const WALLET_TYPES = ['PREPAID', 'POSTPAID'] as const
export const CREDIT_REASONS = ['PURCHASED', 'FREE_CREDIT', 'PROMOTIONAL'] as const
export const TRANSACTION_TYPES = ['credit', 'debit', 'expiry'] as const

export type WalletType = (typeof WALLET_TYPES)[number]
export type CreditReason = (typeof CREDIT_REASONS)[number]
export type TransactionType = (typeof TRANSACTION_TYPES)[number]
export const AUTO_TOPUP_MODES = ['invoiced', 'instant'] as const
export type AutoTopUpMode = (typeof AUTO_TOPUP_MODES)[number]
export type AlertState = 'armed' | 'alerted'

/** The balance is not a column: it is derived from the ledger (see balances.ts). */
export interface Wallet extends BaseRecord {
  customer_id: string
  currency: string
  name: string
  description: string | null
  wallet_type: WalletType
  conversion_rate: string
  /** balance alert and auto top-up settings (migrations/0002_auto_topup.sql, auto-topup.ts) */
  alert_threshold: string | null
  alert_state: AlertState
  auto_topup_enabled: boolean
  auto_topup_amount: string | null
  auto_topup_mode: AutoTopUpMode | null
}

export const WalletSchema = new EntitySchema<Wallet>({
  name: 'Wallet',
  tableName: 'wallets',
  properties: {
    ...baseColumns<Wallet>(),
    customer_id: text(),
    currency: text(),
    name: text(),
    description: text(true),
    wallet_type: text(),
    conversion_rate: decimal(),
    alert_threshold: decimal(true),
    alert_state: { ...text(), default: 'armed' },
    auto_topup_enabled: { ...bool(), default: false },
    auto_topup_amount: decimal(true),
    auto_topup_mode: text(true),
  },
})

/** Credits one debit took from one credit transaction. */
export interface Consumption {
  credit_tx_id: string
  credits: string
}

export interface WalletTransaction extends BaseRecord {
  wallet_id: string
  customer_id: string
  type: TransactionType
  transaction_reason: CreditReason | 'USAGE' | 'CREDIT_EXPIRED' | 'WALLET_TERMINATED'
  credit_amount: string
  credits_available: string
  credits_unfunded: string
  amount: string
  conversion_rate: string
  expiry_date: Date | null
  priority: number | null
  idempotency_key: string
  reference: string | null
  consumed: Consumption[]
}

export const WalletTransactionSchema = new EntitySchema<WalletTransaction>({
  name: 'WalletTransaction',
  tableName: 'wallet_transactions',
  properties: {
    ...baseColumns<WalletTransaction>(),
    wallet_id: text(),
    customer_id: text(),
    type: text(),
    transaction_reason: text(),
    credit_amount: decimal(),
    credits_available: decimal(),
    credits_unfunded: decimal(),
    amount: decimal(),
    conversion_rate: decimal(),
    expiry_date: timestamp(true),
    priority: integer(true),
    idempotency_key: text(),
    reference: text(true),
    consumed: json(),
  },
})
