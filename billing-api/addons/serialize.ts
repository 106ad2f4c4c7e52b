import { serializeBase, pick } from '../db/common.js'
import type { EntitlementResponse } from '../entitlements/index.js'
import type { Price } from '../plans/price.entity.js'
import { serializePrice } from '../plans/index.js'
import type { Addon } from './addon.entity.js'

export function serializeAddon(a: Addon, prices: Price[], entitlements: EntitlementResponse[]) {
  return {
    ...serializeBase(a),
    ...pick(a, ['name', 'lookup_key', 'description']),
    prices: prices.map(serializePrice),
    entitlements,
    type: 'onetime',
  }
}
