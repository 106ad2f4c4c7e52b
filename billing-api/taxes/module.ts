import { taxRateSchema, taxAssociationSchema } from './response-schemas.js'
import type { FastifyInstance } from 'fastify'
import type { BillingContext } from '../context.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { TaxAssociationSchema } from './tax-association.entity.js'
import { taxAssociationRoutes } from './tax-association.routes.js'
import { TaxRateSchema } from './tax-rate.entity.js'
import { taxRateRoutes } from './tax-rate.routes.js'

async function taxRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  await taxRateRoutes(app, ctx)
  await taxAssociationRoutes(app, ctx)
}

export const taxesModule: DomainModule = {
  name: 'taxes',
  entities: [TaxRateSchema, TaxAssociationSchema],
  migrations: [sqlMigration('taxes_0001_init', new URL('./migrations/0001_init.sql', import.meta.url))],
  schemas: [taxRateSchema, taxAssociationSchema],
  routes: taxRoutes,
}
