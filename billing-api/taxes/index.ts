// The taxes domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { taxAmount } from './tax-amount.js'
export { serializeTaxRate } from './tax-rate.routes.js'
