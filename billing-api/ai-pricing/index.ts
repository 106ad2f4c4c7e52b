// The ai-pricing domain's public surface: what other domains and the composition root use.
export { parsePricingDescription } from './deterministic-parser.js'
export type { ParsedPricing } from './parsed-pricing.js'
