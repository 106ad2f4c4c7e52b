// The credit-grants domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { applyDueCreditGrants } from './apply-due.js'
export { serializeCreditGrant } from './serialize.js'
export { listCreditGrants } from './service.js'
