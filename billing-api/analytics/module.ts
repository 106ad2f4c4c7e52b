import type { DomainModule } from '../module.js'
import { analyticsRoutes } from './routes.js'

/** Read-only analytics over usage and invoices: no tables of its own. */
export const analyticsModule: DomainModule = {
  name: 'analytics',
  entities: [],
  migrations: [],
  routes: analyticsRoutes,
}
