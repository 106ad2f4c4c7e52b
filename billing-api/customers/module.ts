import type { DomainModule } from '../module.js'
import { CustomerSchema } from './customer.entity.js'
import { customerRoutes } from './routes.js'

export const customersModule: DomainModule = { name: 'customers', entities: [CustomerSchema], migrations: [], routes: customerRoutes }
