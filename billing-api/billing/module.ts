import type { DomainModule } from '../module.js'
import { explainRoutes } from './explain-routes.js'
import { billingRoutes } from './routes.js'

/** Billing a subscription period: no tables of its own (it writes invoices and reads usage). */
export const billingModule: DomainModule = {
  name: 'billing',
  entities: [],
  migrations: [],
  routes: async (app, ctx) => {
    await billingRoutes(app, ctx)
    await explainRoutes(app, ctx)
  },
}
