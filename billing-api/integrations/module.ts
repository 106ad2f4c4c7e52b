import { integrationConnectionSchema, entityIntegrationMappingSchema, integrationSecretSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { EntityIntegrationMappingSchema, IntegrationConnectionSchema, PaymentMemberSchema } from './entities.js'
import { integrationRoutes } from './routes.js'
import { flexpriceIntegrationRoutes } from './flexprice-routes.js'

export const integrationsModule: DomainModule = {
  name: 'integrations',
  entities: [IntegrationConnectionSchema, EntityIntegrationMappingSchema, PaymentMemberSchema],
  migrations: [sqlMigration('integrations_0001_init', new URL('./migrations/0001_init.sql', import.meta.url))],
  schemas: [integrationConnectionSchema, entityIntegrationMappingSchema, integrationSecretSchema],
  routes: async (app, ctx) => {
    await integrationRoutes(app, ctx)
    await flexpriceIntegrationRoutes(app, ctx)
  },
}
