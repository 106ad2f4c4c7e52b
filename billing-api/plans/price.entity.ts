import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, decimal, integer, json, text, timestamp, type BaseRecord } from '../db/common.js'
import type { BillingPeriod } from '../periods/periods.js'


export interface PriceTier {
  /** null or absent: the open last tier */
  up_to?: number | null
  unit_amount: string
  flat_amount?: string | null
}

export interface Price extends BaseRecord {
  entity_type: 'PLAN' | 'ADDON'
  entity_id: string
  type: 'FIXED' | 'USAGE'
  billing_model: 'FLAT_FEE' | 'PACKAGE' | 'TIERED'
  tier_mode: 'VOLUME' | 'SLAB' | null
  currency: string
  amount: string
  meter_id: string | null
  billing_period: BillingPeriod
  billing_period_count: number
  billing_cadence: 'RECURRING'
  invoice_cadence: 'ADVANCE' | 'ARREAR'
  trial_period_days: number
  tiers: PriceTier[] | null
  transform_quantity: { divide_by: number; round: 'up' | 'down' } | null
  min_quantity: string | null
  lookup_key: string | null
  description: string | null
  display_name: string | null
  sequence: number
  start_date: Date | null
  end_date: Date | null
  /** pricing unit code, copied from the unit when the price is created */
  price_unit: string | null
  price_unit_id: string | null
  price_unit_amount: string | null
  price_unit_tiers: PriceTier[] | null
  /** base-currency value of one pricing unit, copied from the unit */
  conversion_rate: string | null
}

export const PriceSchema = new EntitySchema<Price>({
  name: 'Price',
  tableName: 'prices',
  properties: {
    ...baseColumns<Price>(),
    entity_type: text(),
    entity_id: text(),
    type: text(),
    billing_model: text(),
    tier_mode: text(true),
    currency: text(),
    amount: decimal(),
    meter_id: text(true),
    billing_period: text(),
    billing_period_count: integer(),
    billing_cadence: text(),
    invoice_cadence: text(),
    trial_period_days: integer(),
    tiers: json(true),
    transform_quantity: json(true),
    min_quantity: decimal(true),
    lookup_key: text(true),
    description: text(true),
    display_name: text(true),
    sequence: integer(),
    start_date: timestamp(true),
    end_date: timestamp(true),
    price_unit: text(true),
    price_unit_id: text(true),
    price_unit_amount: decimal(true),
    price_unit_tiers: json(true),
    conversion_rate: decimal(true),
  },
})
