// The PDF layout alone: deterministic bytes, every line item printed across pages.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { renderInvoicePdf, type InvoicePdfView } from './render-invoice-pdf.js'

const d = (s: string) => new Date(s)
function view(lines: number): InvoicePdfView {
  return {
    invoiceNumber: 'INV-000007', invoiceStatus: 'FINALIZED', paymentStatus: 'PENDING', issueDate: d('2026-09-15T10:00:00Z'),
    dueDate: d('2026-09-30T00:00:00Z'), periodStart: d('2026-08-01T00:00:00Z'), periodEnd: d('2026-09-01T00:00:00Z'), currency: 'EUR',
    seller: { name: 'Seller', lines: ['1 Street', null, ''] },
    customer: { name: 'Buyer', externalId: 'b-1', lines: [] },
    lines: Array.from({ length: lines }, (_, i) => ({
      description: `Line ${i + 1}`, periodStart: d('2026-08-01T00:00:00Z'), periodEnd: d('2026-09-01T00:00:00Z'), quantity: '2.5', amount: '0.10',
    })),
    totals: {
      subtotal: '1234567890.123456', totalDiscount: '-1.00', totalTax: '0.00', prepaidCreditsApplied: '0.00', total: '8.00',
      amountPaid: '0.00', amountDue: '8.00', amountRemaining: '8.00',
    },
  }
}

function text(pdf: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'render-pdf-'))
  try {
    writeFileSync(join(dir, 'x.pdf'), pdf)
    return execFileSync('pdftotext', ['-layout', join(dir, 'x.pdf'), '-'], { encoding: 'utf8' })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('the same view renders the same bytes', async () => {
  const [a, b] = await Promise.all([renderInvoicePdf(view(2)), renderInvoicePdf(view(2))])
  assert.ok(a.equals(b))
})

test('amounts print exactly as given; long tables continue on new pages', async () => {
  const out = text(await renderInvoicePdf(view(120)))
  for (let i = 1; i <= 120; i++) assert.match(out, new RegExp(`Line ${i}\\s`))
  assert.ok(out.includes('1234567890.123456 EUR'))
  assert.ok(out.includes('-1.00 EUR'))
  assert.ok(out.includes('INV-000007 (continued)'))
  assert.ok(out.includes('2026-09-30'))
})

test('a draft is titled DRAFT', async () => {
  const out = text(await renderInvoicePdf({ ...view(1), invoiceNumber: null, invoiceStatus: 'DRAFT' }))
  assert.ok(out.includes('DRAFT'))
  assert.ok(!out.includes('INV-'))
})
