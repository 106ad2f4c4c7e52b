// The plans domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { toPriceDefinition } from './price-definition.js'
export { priceInputSchema, serializePlan, serializePrice } from './routes.js'
export { buildPrice, getPlan, readPlan, validatePriceInput } from './service.js'
export type { PriceInput } from './service.js'
