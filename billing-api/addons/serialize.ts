import { serializeBase } from '../db/common.js'
import type { EntitlementResponse } from '../entitlements/read.js'
import type { Price } from '../plans/price.entity.js'
import { serializePrice } from '../plans/routes.js'
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
