// The entitlements domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { listEntitlements, listEntitlementsByEntity } from './read.js'
export type { EntitlementResponse } from './read.js'
export { currentUsagePeriod, OPEN_END } from './check.js'
export { customerGrants, grantsOf } from './customer-grants.js'
export { allowance, combineGrants } from './access.js'
export type { CustomerGrant } from './customer-grants.js'
