// Every billing-api domain, in registration (and migration) order. A new domain adds its
// DomainModule here and nowhere else.
import { authModule } from './auth/module.js'
import { customersModule } from './customers/module.js'
import { eventsModule } from './events/module.js'
import { invoicesModule } from './invoices/module.js'
import { billingModule } from './billing/module.js'
import { metersModule } from './meters/module.js'
import type { DomainModule } from './module.js'
import { plansModule } from './plans/module.js'
import { subscriptionsModule } from './subscriptions/module.js'
import { tenantsModule } from './tenants/module.js'
import { couponsModule } from './coupons/module.js'
import { taxesModule } from './taxes/module.js'
import { featuresModule } from './features/module.js'
import { groupsModule } from './groups/module.js'
import { addonsModule } from './addons/module.js'
import { entitlementsModule } from './entitlements/module.js'
import { pricingUnitsModule } from './pricing-units/module.js'
import { creditGrantsModule } from './credit-grants/module.js'
import { walletsModule } from './wallets/module.js'
import { webhooksModule } from './webhooks/module.js'
import { integrationsModule } from './integrations/module.js'
import { paymentsModule } from './payments/module.js'
import { creditNotesModule } from './credit-notes/module.js'
import { aiPricingModule } from './ai-pricing/module.js'
import { environmentCloneModule } from './environment-clone/module.js'
import { subscriptionPhasesModule } from './subscription-phases/module.js'
import { usageAlertsModule } from './usage-alerts/module.js'
import { analyticsModule } from './analytics/module.js'
import { liveModule } from './live/module.js'

export const modules: DomainModule[] = [
  tenantsModule,
  authModule,
  eventsModule,
  metersModule,
  customersModule,
  plansModule,
  subscriptionsModule,
  invoicesModule,
  billingModule,
  couponsModule,
  taxesModule,
  featuresModule,
  groupsModule,
  addonsModule,
  entitlementsModule,
  pricingUnitsModule,
  creditGrantsModule,
  walletsModule,
  webhooksModule,
  integrationsModule,
  paymentsModule,
  creditNotesModule,
  aiPricingModule,
  environmentCloneModule,
  subscriptionPhasesModule,
  usageAlertsModule,
  analyticsModule,
  liveModule,
]
