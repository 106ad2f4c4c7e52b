import { sqlMigration, type DomainModule } from '../module.js'
import { InvoiceLineItemSchema, InvoiceSchema } from './invoice.entity.js'
import { InvoicePaymentSchema } from './payment.entity.js'
import { invoiceDocumentRoutes } from './document-routes.js'
import { invoiceRoutes } from './routes.js'

export const invoicesModule: DomainModule = {
  name: 'invoices',
  entities: [InvoiceSchema, InvoiceLineItemSchema, InvoicePaymentSchema],
  migrations: [
    sqlMigration('invoices_0001_states', new URL('./migrations/0001_states.sql', import.meta.url)),
    sqlMigration('invoices_0002_documents', new URL('./migrations/0002_documents.sql', import.meta.url)),
  ],
  routes: async (app, ctx) => {
    await invoiceRoutes(app, ctx)
    await invoiceDocumentRoutes(app, ctx)
  },
}
