import type { DomainModule } from '../module.js'
import { billingRoutes } from './routes.js'

/** Billing a subscription period: no tables of its own (it writes invoices and reads usage). */
export const billingModule: DomainModule = {
  name: 'billing',
  entities: [],
  migrations: [],
  routes: billingRoutes,
}
