import type { DomainModule } from '../module.js'
import { sqlMigration } from '../module.js'
import { liveRoutes } from './routes.js'

/** Live access: the entitlement check from memory, live balances, spend caps, usage summaries. */
export const liveModule: DomainModule = {
  name: 'live',
  entities: [],
  migrations: [sqlMigration('live_0001_access', new URL('./migrations/0001_live_access.sql', import.meta.url))],
  routes: liveRoutes,
}
