// Builds the OpenAPI document in this process, without any service: the same route plugins as
// the running platform are registered on a server that never listens, with an ORM, a ClickHouse
// client and a Kafka producer that are created but never connected (registering a route calls
// none of them). The client generator and its drift test use it.
import { MikroORM, defineConfig } from '@mikro-orm/postgresql'
import type { Producer } from 'kafkajs'
import { registerBillingApi } from '../../billing-api/app.js'
import { createAuthenticator } from '../../billing-api/auth/index.js'
import type { BillingContext } from '../../billing-api/context.js'
import { subscriptionInvoicing } from '../../billing-api/billing/index.js'
import { entities } from '../../billing-api/database.js'
import { topUpInvoicing } from '../../billing-api/invoices/index.js'
import { paymentFailureReporting } from '../../billing-api/payments/index.js'
import { registerOpenApi } from '../../billing-api/openapi/swagger.js'
import { ClickHouse } from '../../clickhouse/client.js'
import { registerIngest } from '../../ingest/app.js'
import { systemClock } from '../../platform/clock.js'
import { loadConfig } from '../../platform/config.js'
import { createHttpServer } from '../../platform/http.js'
import { createKafka } from '../../platform/kafka.js'

/** Addresses nothing listens on: the document needs the objects, never a connection. */
const UNUSED_BROKER = '127.0.0.1:9'
const UNUSED_CLICKHOUSE = 'http://127.0.0.1:9'

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, unknown> }

export async function buildOpenApiDocument(): Promise<OpenApiDocument> {
  const config = loadConfig(process.env, { kafkaBrokers: [UNUSED_BROKER] })
  const orm = await MikroORM.init(
    defineConfig({ clientUrl: config.databaseUrl, entities, discovery: { warnWhenNoEntities: false }, connect: false, allowGlobalContext: false }),
  )
  const ch = ClickHouse.open({ ...config.clickhouse, url: UNUSED_CLICKHOUSE })
  const producer: Producer = createKafka(config, 'openapi').producer()
  const ctx: BillingContext = { config, orm, ch, clock: systemClock, topUpInvoicing, subscriptionInvoicing, paymentFailures: paymentFailureReporting }
  const app = createHttpServer({ service: 'openapi', logLevel: 'silent', ...config.http })
  try {
    const auth = createAuthenticator(orm, systemClock, config.apiKeyCacheTtlMs, config.apiKeyHashing)
    await registerOpenApi(app)
    await registerBillingApi(app, ctx, auth)
    await registerIngest(app, { producer, topic: config.eventsTopic, clock: systemClock, timeWindow: config.ingestTimeWindow, partitions: config.eventsPartitions }, auth, config.ingestBodyLimitBytes)
    await app.ready()
    // A JSON round trip: the document as a client downloads it (no undefined members).
    return JSON.parse(JSON.stringify(app.swagger())) as OpenApiDocument
  } finally {
    await app.close()
    await ch.close()
    await orm.close()
  }
}
