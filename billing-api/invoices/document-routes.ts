// Invoice downloads: the PDF (cached per invoice version) and CSV exports.
import type { FastifyInstance, FastifyReply } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { idParams } from '../http/schemas.js'
import { invoiceLinesCsv, invoiceSearchCsv, type CsvDownload } from './csv-export.js'
import { invoicePdf } from './pdf/invoice-document.js'
import { invoiceSearchBody } from './search.js'
import { typed } from '../http/typed-routes.js'
import { READS } from '../http/route-access.js'
import { download } from '../http/response-schemas.js'

const pdfQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    force_generate: { type: 'boolean', default: false },
    // Flexprice's SDK asks for a presigned URL with url=true; the document itself is what is served
    url: { type: 'boolean', enum: [false] },
  },
} as const

function sendCsv(reply: FastifyReply, csv: CsvDownload) {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${csv.filename}"`)
    .send(csv.content)
}

export async function invoiceDocumentRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.get('/invoices/:id/pdf', { schema: { response: { 200: download('application/pdf', 'the invoice as a PDF document') }, tags: ['invoices'], params: idParams, querystring: pdfQuery } }, async (request, reply) => {
    const { id } = request.params
    const { force_generate } = request.query
    const pdf = await invoicePdf(ctx.orm.em.fork(), scopeOf(request), id, { forceGenerate: force_generate })
    const name = (pdf.invoice.invoice_number ?? pdf.invoice.id).replace(/[^A-Za-z0-9._-]/g, '_')
    return reply
      .type('application/pdf')
      .header('content-disposition', `inline; filename="invoice-${name}.pdf"`)
      .header('x-document-cache', pdf.cache)
      .send(pdf.content)
  })

  app.get('/invoices/:id/csv', { schema: { response: { 200: download('text/csv', 'the invoice lines as CSV') }, tags: ['invoices'], params: idParams } }, async (request, reply) => {
    const { id } = request.params
    return sendCsv(reply, await invoiceLinesCsv(ctx.orm.em.fork(), scopeOf(request), id))
  })

  app.post('/invoices/search/csv', { config: READS, schema: { response: { 200: download('text/csv', 'the matching invoices as CSV') }, tags: ['invoices'], body: invoiceSearchBody } }, async (request, reply) => {
    return sendCsv(reply, await invoiceSearchCsv(ctx.orm.em.fork(), scopeOf(request), request.body))
  })
}
