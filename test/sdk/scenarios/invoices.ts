// Invoices, payments and credit notes through the SDK.
import assert from 'node:assert/strict'
import { needing, type Scenario } from './context.js'

const INVOICE_OPS = [
  'invoices.createInvoice', 'invoices.getInvoice', 'invoices.queryInvoice', 'invoices.updateInvoice', 'invoices.getInvoicePdf',
  'invoices.finalizeInvoice', 'invoices.getCustomerInvoiceSummary', 'invoices.triggerInvoiceCommsWebhook',
  'invoices.updateInvoicePaymentStatus', 'invoices.attemptInvoicePayment', 'invoices.voidInvoice', 'invoices.getInvoicePreview',
]
const PAYMENT_OPS = ['payments.createPayment', 'payments.getPayment', 'payments.listPayments', 'payments.updatePayment', 'payments.processPayment']
const CREDIT_NOTE_OPS = ['creditNotes.createCreditNote', 'creditNotes.getCreditNote', 'creditNotes.processCreditNote', 'creditNotes.voidCreditNote']

export async function invoices(s: Scenario): Promise<void> {
  const { sdk, rec, ids } = s
  await needing(s, ['customer'], [...INVOICE_OPS, ...PAYMENT_OPS, ...CREDIT_NOTE_OPS], async (customerId) => {
    // 2 x 12.50 + 1 x 4.99: 29.99 before the customer's 20 % VAT
    const inv = await rec.call('invoices.createInvoice', () => sdk.invoices.createInvoice({
      customerId, currency: 'USD', invoiceType: 'ONE_OFF', subtotal: '29.99', total: '29.99', amountDue: '29.99',
      lineItems: [{ displayName: 'Seats', amount: '25.00', quantity: '2' }, { displayName: 'Setup', amount: '4.99', quantity: '1' }],
    }), (r) => {
      assert.equal(r.customerId, customerId)
      assert.equal(r.subtotal, '29.99')
      assert.equal(r.lineItems?.length, 2)
    })
    if (!inv?.id) return [...INVOICE_OPS.slice(1), ...PAYMENT_OPS, ...CREDIT_NOTE_OPS].forEach((op) => rec.skip(op, 'an invoice'))
    const id = inv.id
    ids.invoice = id
    await rec.call('invoices.getInvoice', () => sdk.invoices.getInvoice(id), (r) => assert.equal(r.total, '29.99'))
    // the subscription billed this customer too: its invoice is of type SUBSCRIPTION
    await rec.call('invoices.queryInvoice', () => sdk.invoices.queryInvoice({ customerId, invoiceType: 'ONE_OFF' }), (r) => {
      assert.deepEqual(r.items?.map((x) => x.id), [id])
      assert.equal(r.items?.[0]?.amountDue, '29.99')
    })
    await rec.call('invoices.updateInvoice', () => sdk.invoices.updateInvoice(id, { metadata: { po: '42' } }), (r) => assert.equal(r.metadata?.po, '42'))
    // Meterline serves the document itself, not a presigned URL (url=true)
    await rec.call('invoices.getInvoicePdf', () => sdk.invoices.getInvoicePdf(id, false), async (r) => {
      assert.equal(Buffer.from(await new Response(r).arrayBuffer()).subarray(0, 5).toString(), '%PDF-')
    })
    await rec.call('invoices.finalizeInvoice', () => sdk.invoices.finalizeInvoice(id), (r) => assert.equal(r.message, `invoice ${id} finalized`))
    await rec.call('invoices.getInvoice', () => sdk.invoices.getInvoice(id), (r) => {
      assert.equal(r.invoiceStatus, 'FINALIZED')
      assert.equal(r.totalTax, '6.00')
      assert.equal(r.total, '35.99')
    })
    await rec.call('invoices.getCustomerInvoiceSummary', () => sdk.invoices.getCustomerInvoiceSummary(customerId), (r) => {
      // the finalized invoices of the customer in USD: this one (35.99) among them, nothing paid yet
      const usd = r.summaries?.find((x) => x.currency === 'USD')
      assert.ok(usd && Number(usd.totalRevenueAmount) >= 35.99 && Number(usd.totalUnpaidAmount) >= 35.99, JSON.stringify(r))
    })
    await rec.call('invoices.triggerInvoiceCommsWebhook', () => sdk.invoices.triggerInvoiceCommsWebhook(id), () => {})
    await rec.call('invoices.attemptInvoicePayment', () => sdk.invoices.attemptInvoicePayment(id), () => {})

    const pay = await rec.call('payments.createPayment', () => sdk.payments.createPayment({
      amount: '10.00', currency: 'USD', destinationId: id, destinationType: 'INVOICE', paymentMethodType: 'OFFLINE',
    }), async (r) => {
      assert.deepEqual([r.amount, r.destinationId, r.paymentStatus, r.paymentMethodType], ['10.00', id, 'SUCCEEDED', 'OFFLINE'])
      // recorded on the invoice: 10.00 of its 35.99 paid
      const after = await sdk.invoices.getInvoice(id)
      assert.deepEqual([after.amountPaid, after.amountRemaining, after.paymentStatus], ['10.00', '25.99', 'PENDING'])
    })
    ids.payment = pay?.id
    await needing(s, ['payment'], PAYMENT_OPS.slice(1), async (paymentId) => {
      await rec.call('payments.getPayment', () => sdk.payments.getPayment(paymentId), (r) => assert.equal(r.amount, '10.00'))
      await rec.call('payments.listPayments', () => sdk.payments.listPayments({ destinationId: id }), (r) => assert.deepEqual(r.items?.map((x) => x.id), [paymentId]))
      await rec.call('payments.updatePayment', () => sdk.payments.updatePayment(paymentId, { metadata: { ref: 'wire-1' } }), (r) => assert.equal(r.metadata?.ref, 'wire-1'))
      // a recorded payment is applied when recorded: processing it again is refused (400)
      await rec.call('payments.processPayment', () => sdk.payments.processPayment(paymentId), () => {})
    })
    await creditNotes(s, id, inv.lineItems ?? [])
    // what is left to pay: 21.00 after the credit note
    const left = (await sdk.invoices.getInvoice(id).catch(() => undefined))?.amountRemaining ?? '0'
    await rec.call('invoices.updateInvoicePaymentStatus', () => sdk.invoices.updateInvoicePaymentStatus(id, { paymentStatus: 'SUCCEEDED', amount: left }), (r) => assert.equal(r.paymentStatus, 'SUCCEEDED'))

    const second = await sdk.invoices.createInvoice({
      customerId, currency: 'USD', invoiceType: 'ONE_OFF', subtotal: '5.00', total: '5.00', amountDue: '5.00', lineItems: [{ displayName: 'Extra', amount: '5.00', quantity: '1' }],
    }).catch(() => undefined)
    // spec: only a FINALIZED invoice can be voided
    if (second?.id) await sdk.invoices.finalizeInvoice(second.id).catch(() => undefined)
    if (second?.id) await rec.call('invoices.voidInvoice', () => sdk.invoices.voidInvoice(second.id!), async () => assert.equal((await sdk.invoices.getInvoice(second.id!)).invoiceStatus, 'VOIDED'))
    else rec.skip('invoices.voidInvoice', 'a second invoice')
    // the subscription's current period as the spec's internal preview computes it, nothing stored
    if (ids.subscription) await rec.call('invoices.getInvoicePreview', () => sdk.invoices.getInvoicePreview({ subscriptionId: ids.subscription! }), async (r) => {
      const internal = (await s.api.post('/v1/invoices/internal/preview', { subscription_id: ids.subscription })).body
      assert.deepEqual([r.id ?? null, r.subscriptionId, r.invoiceStatus, r.subtotal, r.totalDiscount, r.total], [null, ids.subscription, 'DRAFT', internal.subtotal, internal.total_discount, internal.total])
      assert.equal(r.lineItems?.length, internal.line_items.length)
    })
    else rec.skip('invoices.getInvoicePreview', 'a subscription')
  })
}

/**
 * On the invoice of 35.99 with 10.00 paid (25.99 left): a draft note credits Setup's 4.99, a
 * second draft is voided, the first is finalized: 31.00 due, 21.00 left, adjustment 4.99.
 */
async function creditNotes(s: Scenario, invoiceId: string, lines: { id?: string; displayName?: string }[]): Promise<void> {
  const { sdk, rec } = s
  const lineId = (name: string) => lines.find((l) => l.displayName === name)?.id ?? ''
  const note = await rec.call('creditNotes.createCreditNote', () => sdk.creditNotes.createCreditNote({
    invoiceId, reason: 'BILLING_ERROR', memo: 'setup billed twice', processCreditNote: false, lineItems: [{ invoiceLineItemId: lineId('Setup'), amount: '4.99' }],
  }), (r) => {
    assert.deepEqual([r.invoiceId, r.creditNoteStatus, r.creditNoteType, r.totalAmount], [invoiceId, 'DRAFT', 'ADJUSTMENT', '4.99'])
    assert.deepEqual(r.lineItems?.map((l) => [l.displayName, l.amount]), [['Setup', '4.99']])
  })
  if (!note?.id) return CREDIT_NOTE_OPS.slice(1).forEach((op) => rec.skip(op, 'a credit note'))
  const noteId = note.id
  await rec.call('creditNotes.getCreditNote', () => sdk.creditNotes.getCreditNote(noteId), (r) => assert.deepEqual([r.invoiceId, r.totalAmount, r.memo], [invoiceId, '4.99', 'setup billed twice']))
  const mistake = await sdk.creditNotes.createCreditNote({ invoiceId, reason: 'DUPLICATE', processCreditNote: false, lineItems: [{ invoiceLineItemId: lineId('Seats'), amount: '1.00' }] }).catch(() => undefined)
  if (mistake?.id) await rec.call('creditNotes.voidCreditNote', () => sdk.creditNotes.voidCreditNote(mistake.id!), (r) => assert.equal(r.creditNoteStatus, 'VOIDED'))
  else rec.skip('creditNotes.voidCreditNote', 'a second credit note')
  await rec.call('creditNotes.processCreditNote', () => sdk.creditNotes.processCreditNote(noteId), async (r) => {
    assert.equal(r.creditNoteStatus, 'FINALIZED')
    const after = await sdk.invoices.getInvoice(invoiceId)
    assert.deepEqual([after.adjustmentAmount, after.amountDue, after.amountPaid, after.amountRemaining], ['4.99', '31.00', '10.00', '21.00'])
  })
}
