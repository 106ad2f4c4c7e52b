import { invoiceRefundSchema, paymentFailureSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { InvoiceRefundSchema, PaymentFailureSchema } from './payments.entity.js'
import { paymentRoutes } from './routes.js'

export const paymentsModule: DomainModule = {
  name: 'payments',
  entities: [InvoiceRefundSchema, PaymentFailureSchema],
  migrations: [
    sqlMigration('payments_0001_refunds_failures', new URL('./migrations/0001_refunds_failures.sql', import.meta.url)),
  ],
  schemas: [invoiceRefundSchema, paymentFailureSchema],
  routes: paymentRoutes,
}
