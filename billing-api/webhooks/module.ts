import { webhookEndpointSchema, webhookDeliverySchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { webhookRoutes } from './routes.js'
import { WebhookAttemptSchema, WebhookDeliverySchema, WebhookEndpointSchema } from './webhook.entity.js'

export const webhooksModule: DomainModule = {
  name: 'webhooks',
  entities: [WebhookEndpointSchema, WebhookDeliverySchema, WebhookAttemptSchema],
  migrations: [
    sqlMigration('webhooks_0001_init', new URL('./migrations/0001_init.sql', import.meta.url)),
    sqlMigration('webhooks_0002_secret_encrypted', new URL('./migrations/0002_secret_encrypted.sql', import.meta.url)),
    sqlMigration('webhooks_0003_endpoint_disable_cancel', new URL('./migrations/0003_endpoint_disable_cancel.sql', import.meta.url)),
  ],
  schemas: [webhookEndpointSchema, webhookDeliverySchema],
  routes: webhookRoutes,
}
