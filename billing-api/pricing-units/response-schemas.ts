// Response schemas of the pricing unit routes (registered by module.ts, referred to by $id).
import { str, stringOrNull, recordSchema } from '../http/response-schemas.js'

export const pricingUnitSchema = recordSchema('PricingUnit', {
  name: str,
  code: str,
  symbol: stringOrNull,
  base_currency: str,
  conversion_rate: str,
})
