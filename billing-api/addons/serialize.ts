import { serializeBase } from '../db/common.js'
import type { EntitlementResponse } from '../entitlements/index.js'
import type { Price } from '../plans/price.entity.js'
import { serializePrice } from '../plans/index.js'
import type { Addon } from './addon.entity.js'

export function serializeAddon(a: Addon, prices: Price[], entitlements: EntitlementResponse[]) {
  return {
    ...serializeBase(a),
    name: a.name,
    lookup_key: a.lookup_key,
    description: a.description,
    prices: prices.map(serializePrice),
    entitlements,
  }
}
