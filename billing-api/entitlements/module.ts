import { entitlementSchema } from './response-schemas.js'
import type { DomainModule } from '../module.js'
import { sqlMigration } from '../module.js'
import { EntitlementSchema } from './entitlement.entity.js'
import { entitlementRoutes } from './routes.js'

export const entitlementsModule: DomainModule = {
  name: 'entitlements',
  entities: [EntitlementSchema],
  migrations: [sqlMigration('entitlements_0001_init', new URL('./migrations/0001_init.sql', import.meta.url))],
  schemas: [entitlementSchema],
  routes: entitlementRoutes,
}
