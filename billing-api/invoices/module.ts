import type { DomainModule } from '../module.js'
import { InvoiceLineItemSchema, InvoiceSchema } from './invoice.entity.js'
import { invoiceRoutes } from './routes.js'

export const invoicesModule: DomainModule = { name: 'invoices', entities: [InvoiceSchema, InvoiceLineItemSchema], migrations: [], routes: invoiceRoutes }
