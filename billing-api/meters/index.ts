// The meters domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { postgresMeterSource } from './meter-definitions.js'
export { meterUsage } from './service.js'
export type { UsageRequest } from './service.js'
export { clickhouseUsage, usageReader } from './usage-reader.js'
export type { UsageReader } from './usage-reader.js'
export { roundQuantity } from './rounding.js'
export { meterValue, usageByCustomer } from './meter-value.js'
