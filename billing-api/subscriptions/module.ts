import { addonAssociationSchema, subscriptionSchema, subscriptionV2Schema, subscriptionLineItemSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { subscriptionChangeRoutes } from './change-routes.js'
import { flexpriceSubscriptionRoutes } from './flexprice-routes.js'
import { subscriptionRoutes } from './routes.js'
import { lineItemRoutes } from './line-item-routes.js'
import { subscriptionHierarchyRoutes } from './hierarchy-routes.js'
import { subscriptionCommitmentRoutes } from './commitment-routes.js'
import { planSyncRoutes } from './plan-sync-routes.js'
import { SubscriptionLineItemSchema, SubscriptionSchema } from './subscription.entity.js'
import { AddonAssociationSchema } from './addon-association.entity.js'

export const subscriptionsModule: DomainModule = {
  name: 'subscriptions',
  entities: [SubscriptionSchema, SubscriptionLineItemSchema, AddonAssociationSchema],
  migrations: [sqlMigration('subscriptions_0001_lifecycle', new URL('./migrations/0001_lifecycle.sql', import.meta.url)),
    sqlMigration('subscriptions_0002_addon_associations', new URL('./migrations/0002_addon_associations.sql', import.meta.url)),
    sqlMigration('subscriptions_0003_hierarchy', new URL('./migrations/0003_hierarchy.sql', import.meta.url)),
    sqlMigration('subscriptions_0004_commitments', new URL('./migrations/0004_commitments.sql', import.meta.url)),
    sqlMigration('subscriptions_0005_drop_fill_trigger', new URL('./migrations/0005_drop_fill_trigger.sql', import.meta.url))],
  schemas: [subscriptionSchema, subscriptionV2Schema, subscriptionLineItemSchema, addonAssociationSchema],
  routes: async (app, ctx) => {
    await subscriptionRoutes(app, ctx)
    await subscriptionChangeRoutes(app, ctx)
    await flexpriceSubscriptionRoutes(app, ctx)
    lineItemRoutes(app, ctx)
    await subscriptionHierarchyRoutes(app, ctx)
    await subscriptionCommitmentRoutes(app, ctx)
    await planSyncRoutes(app, ctx)
  },
}
