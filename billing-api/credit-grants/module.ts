import { creditGrantSchema, creditGrantApplicationSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { CreditGrantApplicationSchema } from './application.entity.js'
import { CreditGrantSchema } from './credit-grant.entity.js'
import { creditGrantRoutes } from './routes.js'

export const creditGrantsModule: DomainModule = {
  name: 'credit-grants',
  entities: [CreditGrantSchema, CreditGrantApplicationSchema],
  migrations: [
    sqlMigration('credit_grants_0001_init', new URL('./migrations/0001_init.sql', import.meta.url)),
    sqlMigration('credit_grants_0002_applications', new URL('./migrations/0002_applications.sql', import.meta.url)),
  ],
  schemas: [creditGrantSchema, creditGrantApplicationSchema],
  routes: creditGrantRoutes,
}
