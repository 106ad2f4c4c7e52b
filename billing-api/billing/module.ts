import { sqlMigration, type DomainModule } from '../module.js'
import { explainRoutes } from './explain-routes.js'
import { billingRoutes } from './routes.js'

/** Billing a subscription period: it writes invoices and reads usage; its own tables record billing runs. */
export const billingModule: DomainModule = {
  name: 'billing',
  entities: [],
  migrations: [sqlMigration('billing_0001_billing_runs', new URL('./migrations/0001_billing_runs.sql', import.meta.url))],
  routes: async (app, ctx) => {
    await billingRoutes(app, ctx)
    await explainRoutes(app, ctx)
  },
}
