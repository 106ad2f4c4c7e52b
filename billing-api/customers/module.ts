import { customerIntegrationSchema, customerSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { CustomerIntegrationSchema } from './customer-integration.entity.js'
import { CustomerSchema } from './customer.entity.js'
import { customerRoutes } from './routes.js'

export const customersModule: DomainModule = {
  name: 'customers',
  entities: [CustomerSchema, CustomerIntegrationSchema],
  migrations: [sqlMigration('customers_0001_integrations', new URL('./migrations/0001_integrations.sql', import.meta.url))],
  schemas: [customerIntegrationSchema, customerSchema],
  routes: customerRoutes,
}
