import type { DomainModule } from '../module.js'
import { subscriptionRoutes } from './routes.js'
import { SubscriptionLineItemSchema, SubscriptionSchema } from './subscription.entity.js'

export const subscriptionsModule: DomainModule = {
  name: 'subscriptions',
  entities: [SubscriptionSchema, SubscriptionLineItemSchema],
  migrations: [],
  routes: subscriptionRoutes,
}
