// The one module that owns the Postgres connection (MikroORM). Entities are defined
// with EntitySchema beside their domain code and listed here.
import { MikroORM, defineConfig } from '@mikro-orm/postgresql'
import { Migrator } from '@mikro-orm/migrations'
import { ApiKeySchema } from '../auth/api-key.entity.js'
import { UserSchema } from '../auth/user.entity.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { InvoiceLineItemSchema, InvoiceSchema } from '../invoices/invoice.entity.js'
import { MeterSchema } from '../meters/meter.entity.js'
import { PlanSchema } from '../plans/plan.entity.js'
import { PriceSchema } from '../plans/price.entity.js'
import { SubscriptionLineItemSchema, SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { EnvironmentSchema, TenantSchema } from '../tenants/tenant.entity.js'
import { migrations } from './migrations.js'

export const entities = [
  TenantSchema, EnvironmentSchema, UserSchema, ApiKeySchema, MeterSchema, CustomerSchema,
  PlanSchema, PriceSchema, SubscriptionSchema, SubscriptionLineItemSchema, InvoiceSchema, InvoiceLineItemSchema,
]

export type Orm = MikroORM

export async function openOrm(databaseUrl: string, poolMax = 10): Promise<MikroORM> {
  return MikroORM.init(
    defineConfig({
      clientUrl: databaseUrl,
      entities,
      discovery: { warnWhenNoEntities: false },
      extensions: [Migrator],
      migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, tableName: 'mikro_orm_migrations' },
      pool: { min: 0, max: poolMax },
      allowGlobalContext: false,
      forceUtcTimezone: true,
      debug: false,
    }),
  )
}

export async function migratePostgres(orm: MikroORM): Promise<string[]> {
  const applied = await orm.getMigrator().up()
  return applied.map((m) => m.name)
}
