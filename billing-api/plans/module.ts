import type { DomainModule } from '../module.js'
import { PlanSchema } from './plan.entity.js'
import { PriceSchema } from './price.entity.js'
import { planRoutes } from './routes.js'

export const plansModule: DomainModule = { name: 'plans', entities: [PlanSchema, PriceSchema], migrations: [], routes: planRoutes }
