import { subscriptionPhaseSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { SubscriptionPhaseSchema } from './phase.entity.js'
import { subscriptionPhaseRoutes } from './routes.js'

export const subscriptionPhasesModule: DomainModule = {
  name: 'subscription-phases',
  entities: [SubscriptionPhaseSchema],
  migrations: [sqlMigration('subscription_phases_0001_init', new URL('./migrations/0001_subscription_phases.sql', import.meta.url))],
  schemas: [subscriptionPhaseSchema],
  routes: subscriptionPhaseRoutes,
}
