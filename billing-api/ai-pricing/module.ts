import type { DomainModule } from '../module.js'
import { aiPricingRoutes } from './routes.js'

export const aiPricingModule: DomainModule = {
  name: 'ai-pricing',
  entities: [],
  migrations: [],
  routes: aiPricingRoutes,
}
