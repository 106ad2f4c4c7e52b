import { paymentSchema, invoiceSchema, invoicePreviewDocumentSchema, invoiceStateChangeSchema, invoiceLineItemSchema, couponApplicationSchema, appliedTaxSchema, invoicePaymentSchema, recordedPaymentSchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { InvoiceLineItemSchema, InvoiceSchema } from './invoice.entity.js'
import { InvoicePaymentSchema } from './payment.entity.js'
import { AppliedTaxSchema, CouponApplicationSchema } from './amounts.entity.js'
import { invoiceDocumentRoutes } from './document-routes.js'
import { invoiceRoutes } from './routes.js'
import { manualInvoiceRoutes } from './manual-routes.js'
import { paymentRoutes } from './payment-routes.js'
import { invoiceSummaryRoutes } from './summary-routes.js'

export const invoicesModule: DomainModule = {
  name: 'invoices',
  entities: [InvoiceSchema, InvoiceLineItemSchema, InvoicePaymentSchema, CouponApplicationSchema, AppliedTaxSchema],
  migrations: [
    sqlMigration('invoices_0001_states', new URL('./migrations/0001_states.sql', import.meta.url)),
    sqlMigration('invoices_0002_documents', new URL('./migrations/0002_documents.sql', import.meta.url)),
    sqlMigration('invoices_0003_amounts', new URL('./migrations/0003_amounts.sql', import.meta.url)),
    sqlMigration('invoices_0010_usage_analytics', new URL('./migrations/0010_usage_analytics.sql', import.meta.url)),
    sqlMigration('invoices_0020_commitment_info', new URL('./migrations/0020_commitment_info.sql', import.meta.url)),
    sqlMigration('invoices_0030_entitlement_quantity', new URL('./migrations/0030_entitlement_quantity.sql', import.meta.url)),
  ],
  schemas: [paymentSchema, invoiceSchema, invoicePreviewDocumentSchema, invoiceStateChangeSchema, invoiceLineItemSchema, couponApplicationSchema, appliedTaxSchema, invoicePaymentSchema, recordedPaymentSchema],
  routes: async (app, ctx) => {
    await invoiceRoutes(app, ctx)
    await invoiceDocumentRoutes(app, ctx)
    await manualInvoiceRoutes(app, ctx)
    await paymentRoutes(app, ctx)
    await invoiceSummaryRoutes(app, ctx)
  },
}
