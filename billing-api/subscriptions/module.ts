import { sqlMigration, type DomainModule } from '../module.js'
import { subscriptionChangeRoutes } from './change-routes.js'
import { subscriptionRoutes } from './routes.js'
import { SubscriptionLineItemSchema, SubscriptionSchema } from './subscription.entity.js'

export const subscriptionsModule: DomainModule = {
  name: 'subscriptions',
  entities: [SubscriptionSchema, SubscriptionLineItemSchema],
  migrations: [sqlMigration('subscriptions_0001_lifecycle', new URL('./migrations/0001_lifecycle.sql', import.meta.url))],
  routes: async (app, ctx) => {
    await subscriptionRoutes(app, ctx)
    await subscriptionChangeRoutes(app, ctx)
  },
}
