import { tenantSchema, environmentSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { tenantRoutes } from './routes.js'
import { EnvironmentSchema, TenantSchema } from './tenant.entity.js'

export const tenantsModule: DomainModule = {
  name: 'tenants',
  entities: [TenantSchema, EnvironmentSchema],
  migrations: [sqlMigration('tenants_0001_rate_limits', new URL('./migrations/0001_rate_limits.sql', import.meta.url))],
  schemas: [tenantSchema, environmentSchema],
  routes: tenantRoutes,
}
