import type { DomainModule } from '../module.js'
import { tenantRoutes } from './routes.js'
import { EnvironmentSchema, TenantSchema } from './tenant.entity.js'

export const tenantsModule: DomainModule = { name: 'tenants', entities: [TenantSchema, EnvironmentSchema], migrations: [], routes: tenantRoutes }
