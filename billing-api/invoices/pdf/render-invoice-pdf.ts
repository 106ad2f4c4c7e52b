// The invoice PDF layout. Pure: a plain view model in, the PDF bytes out (no I/O, no clock).
// Built-in Helvetica only (no font files), so text is limited to the WinAnsi character set.
// The document's CreationDate comes from the view (an invoice date), which makes the output
// byte-for-byte reproducible for the same view.
// pdfkit is loaded on the first render: it is not needed to start serving.
import type PDFKitDocument from 'pdfkit'

export interface InvoicePdfParty {
  name: string
  /** address and contact lines, printed in order; empty ones are left out */
  lines: (string | null | undefined)[]
}

export interface InvoicePdfLine {
  description: string
  periodStart: Date | null
  periodEnd: Date | null
  quantity: string
  amount: string
}

export interface InvoicePdfView {
  /** "INV-000001", or null for a draft (printed as DRAFT) */
  invoiceNumber: string | null
  invoiceStatus: string
  paymentStatus: string
  issueDate: Date
  dueDate: Date | null
  periodStart: Date | null
  periodEnd: Date | null
  currency: string
  seller: InvoicePdfParty
  customer: InvoicePdfParty & { externalId: string }
  /** shown in the footer when set */
  helpEmail?: string | null
  lines: InvoicePdfLine[]
  /** decimal strings, printed exactly as given */
  totals: {
    subtotal: string
    totalDiscount: string
    totalTax: string
    prepaidCreditsApplied: string
    total: string
    amountPaid: string
    amountDue: string
    amountRemaining: string
  }
}

const MARGIN = 50
const PAGE_WIDTH = 595.28 // A4
const PAGE_HEIGHT = 841.89
const CONTENT_WIDTH = PAGE_WIDTH - 2 * MARGIN
const BOTTOM = PAGE_HEIGHT - MARGIN - 20 // room for the footer
const GREY = '#555555'
const RULE = '#cccccc'

/** Table columns: x offset from the margin, width, alignment. */
const COLUMNS = {
  description: { x: 0, width: 205, align: 'left' },
  period: { x: 210, width: 130, align: 'left' },
  quantity: { x: 345, width: 60, align: 'right' },
  amount: { x: 410, width: CONTENT_WIDTH - 410, align: 'right' },
} as const

export const formatDate = (d: Date | null | undefined): string => (d ? d.toISOString().slice(0, 10) : '-')
const formatPeriod = (start: Date | null, end: Date | null) => (start || end ? `${formatDate(start)} to ${formatDate(end)}` : '-')
const money = (amount: string, currency: string) => `${amount} ${currency}`

export function invoiceTitle(view: Pick<InvoicePdfView, 'invoiceNumber'>): string {
  return view.invoiceNumber ?? 'DRAFT'
}

export async function renderInvoicePdf(view: InvoicePdfView): Promise<Buffer> {
  const { default: PDFDocument } = (await import('pdfkit')) as { default: typeof PDFKitDocument }
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    info: {
      Title: `Invoice ${invoiceTitle(view)}`,
      Author: view.seller.name,
      Subject: `Invoice for ${view.customer.name}`,
      CreationDate: view.issueDate,
    },
  })
  const chunks: Buffer[] = []
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c))
    doc.on('end', () => resolve(Buffer.concat(chunks)))
    doc.on('error', reject)
  })

  let y = header(doc, view)
  y = parties(doc, view, y + 20)
  y = lineItems(doc, view, y + 25)
  totals(doc, view, y + 15)
  footer(doc, view)
  doc.end()
  return done
}

function header(doc: PDFKit.PDFDocument, view: InvoicePdfView): number {
  const top = MARGIN
  doc.font('Helvetica-Bold').fontSize(16).fillColor('black').text(view.seller.name, MARGIN, top, { width: 300 })
  doc.font('Helvetica').fontSize(9).fillColor(GREY)
  for (const line of compact(view.seller.lines)) doc.text(line, { width: 300 })
  const leftBottom = doc.y

  const right = { width: 200, align: 'right' as const }
  const rx = PAGE_WIDTH - MARGIN - 200
  doc.font('Helvetica-Bold').fontSize(22).fillColor('black').text('INVOICE', rx, top, right)
  doc.font('Helvetica-Bold').fontSize(11).text(invoiceTitle(view), rx, doc.y + 2, right)
  doc.font('Helvetica').fontSize(9).fillColor(GREY).text(`Status: ${view.invoiceStatus}`, rx, doc.y + 2, right)
  const bottom = Math.max(leftBottom, doc.y)
  doc.moveTo(MARGIN, bottom + 12).lineTo(PAGE_WIDTH - MARGIN, bottom + 12).lineWidth(0.5).strokeColor(RULE).stroke()
  return bottom + 12
}

function parties(doc: PDFKit.PDFDocument, view: InvoicePdfView, top: number): number {
  doc.font('Helvetica-Bold').fontSize(8).fillColor(GREY).text('BILL TO', MARGIN, top)
  doc.font('Helvetica-Bold').fontSize(11).fillColor('black').text(view.customer.name, MARGIN, doc.y + 3, { width: 260 })
  doc.font('Helvetica').fontSize(9).fillColor(GREY).text(`Customer ID: ${view.customer.externalId}`, { width: 260 })
  for (const line of compact(view.customer.lines)) doc.text(line, { width: 260 })
  const leftBottom = doc.y

  const details: [string, string][] = [
    ['Invoice number', invoiceTitle(view)],
    ['Issue date', formatDate(view.issueDate)],
    ['Due date', formatDate(view.dueDate)],
    ['Billing period', formatPeriod(view.periodStart, view.periodEnd)],
    ['Currency', view.currency],
    ['Status', view.invoiceStatus],
    ['Payment status', view.paymentStatus],
  ]
  const labelX = MARGIN + 290
  let y = top
  for (const [label, value] of details) {
    doc.font('Helvetica').fontSize(9).fillColor(GREY).text(label, labelX, y, { width: 90 })
    doc.font('Helvetica').fontSize(9).fillColor('black').text(value, labelX + 90, y, { width: CONTENT_WIDTH - 290 - 90, align: 'right' })
    y = doc.y + 3
  }
  return Math.max(leftBottom, y)
}

function tableHeader(doc: PDFKit.PDFDocument, top: number): number {
  doc.font('Helvetica-Bold').fontSize(9).fillColor('black')
  const labels = { description: 'Description', period: 'Period', quantity: 'Quantity', amount: 'Amount' }
  for (const [key, col] of Object.entries(COLUMNS)) {
    doc.text(labels[key as keyof typeof labels], MARGIN + col.x, top, { width: col.width, align: col.align })
  }
  const y = top + 14
  doc.moveTo(MARGIN, y).lineTo(PAGE_WIDTH - MARGIN, y).lineWidth(0.75).strokeColor('black').stroke()
  return y + 6
}

function lineItems(doc: PDFKit.PDFDocument, view: InvoicePdfView, top: number): number {
  let y = tableHeader(doc, top)
  doc.font('Helvetica').fontSize(9)
  if (view.lines.length === 0) {
    doc.fillColor(GREY).text('No line items', MARGIN, y)
    return doc.y + 6
  }
  for (const line of view.lines) {
    const cells = {
      description: line.description,
      period: formatPeriod(line.periodStart, line.periodEnd),
      quantity: line.quantity,
      amount: money(line.amount, view.currency),
    }
    doc.font('Helvetica').fontSize(9)
    const height = Math.max(
      ...Object.entries(COLUMNS).map(([key, col]) => doc.heightOfString(cells[key as keyof typeof cells], { width: col.width })),
    )
    if (y + height > BOTTOM) {
      doc.addPage()
      doc.font('Helvetica').fontSize(8).fillColor(GREY).text(`Invoice ${invoiceTitle(view)} (continued)`, MARGIN, MARGIN)
      y = tableHeader(doc, MARGIN + 18)
      doc.font('Helvetica').fontSize(9)
    }
    doc.fillColor('black')
    for (const [key, col] of Object.entries(COLUMNS)) {
      doc.text(cells[key as keyof typeof cells], MARGIN + col.x, y, { width: col.width, align: col.align })
    }
    y += height + 5
    doc.moveTo(MARGIN, y).lineTo(PAGE_WIDTH - MARGIN, y).lineWidth(0.5).strokeColor(RULE).stroke()
    y += 5
  }
  return y
}

function totals(doc: PDFKit.PDFDocument, view: InvoicePdfView, top: number): number {
  const t = view.totals
  const rows: [string, string, boolean][] = [
    ['Subtotal', t.subtotal, false],
    ['Discounts', t.totalDiscount, false],
    ['Taxes', t.totalTax, false],
    ['Prepaid credits applied', t.prepaidCreditsApplied, false],
    ['Total', t.total, true],
    ['Amount paid', t.amountPaid, false],
    ['Amount due', t.amountDue, false],
    ['Amount remaining', t.amountRemaining, true],
  ]
  if (top + rows.length * 16 > BOTTOM) {
    doc.addPage()
    top = MARGIN
  }
  const labelX = MARGIN + 250
  let y = top
  for (const [label, amount, strong] of rows) {
    doc.font(strong ? 'Helvetica-Bold' : 'Helvetica').fontSize(strong ? 10 : 9).fillColor(strong ? 'black' : GREY)
    doc.text(label, labelX, y, { width: 130 })
    doc.fillColor('black').text(money(amount, view.currency), labelX + 130, y, { width: CONTENT_WIDTH - 250 - 130, align: 'right' })
    y = doc.y + 4
    if (label === 'Total') {
      doc.moveTo(labelX, y).lineTo(PAGE_WIDTH - MARGIN, y).lineWidth(0.5).strokeColor(RULE).stroke()
      y += 4
    }
  }
  return y
}

function footer(doc: PDFKit.PDFDocument, view: InvoicePdfView): void {
  if (!view.helpEmail) return
  // Written below the bottom margin: lift the margin so pdfkit does not start a new page.
  const bottomMargin = doc.page.margins.bottom
  doc.page.margins.bottom = 0
  doc.font('Helvetica').fontSize(8).fillColor(GREY)
    .text(`Questions about this invoice? Contact ${view.helpEmail}`, MARGIN, PAGE_HEIGHT - MARGIN, { width: CONTENT_WIDTH, align: 'center' })
  doc.page.margins.bottom = bottomMargin
}

function compact(lines: (string | null | undefined)[]): string[] {
  return lines.filter((l): l is string => typeof l === 'string' && l.trim() !== '')
}
