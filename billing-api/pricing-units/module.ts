import { pricingUnitSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { PricingUnitSchema } from './pricing-unit.entity.js'
import { pricingUnitRoutes } from './routes.js'

export const pricingUnitsModule: DomainModule = {
  name: 'pricing-units',
  entities: [PricingUnitSchema],
  migrations: [sqlMigration('pricing_units_0001_init', new URL('./migrations/0001_init.sql', import.meta.url))],
  schemas: [pricingUnitSchema],
  routes: pricingUnitRoutes,
}
