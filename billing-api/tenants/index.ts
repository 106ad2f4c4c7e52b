// The tenants domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { createTenant } from './create-tenant.js'
export type { CreatedTenant } from './create-tenant.js'
export { signupRoutes } from './signup-routes.js'
