import { priceSchema, planSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { PlanSchema } from './plan.entity.js'
import { priceRoutes } from './price-routes.js'
import { PriceSchema } from './price.entity.js'
import { planRoutes } from './routes.js'

const migration = (name: string, file: string) => sqlMigration(`plans_${name}`, new URL(`./migrations/${file}`, import.meta.url))

export const plansModule: DomainModule = {
  name: 'plans',
  entities: [PlanSchema, PriceSchema],
  migrations: [
    migration('0001_price_units', '0001_price_units.sql'),
    migration('0002_price_sequence', '0002_price_sequence.sql'),
    migration('0003_price_lookup_key', '0003_price_lookup_key.sql'),
  ],
  schemas: [priceSchema, planSchema],
  routes: async (app, ctx) => {
    await planRoutes(app, ctx)
    await priceRoutes(app, ctx)
  },
}
