// Business metrics of the system events that record invoice and payment changes. Every such
// change publishes its event in its own transaction (publish.ts), so counting there, after the
// commit, counts each change once and never a rolled back one.
import { invoicedAmountMinor, invoicesCounted, paymentsAmountMinor, paymentsRecorded, voidedAmountMinor } from '../../platform/business-metrics.js'
import { toMinorUnits } from '../pricing/minor-units.js'

const INVOICE_EVENTS: Record<string, string> = {
  'invoice.drafted': 'drafted',
  'invoice.finalized': 'finalized',
  'invoice.voided': 'voided',
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined
}

export function countSystemEvent(eventName: string, payload: Record<string, unknown>): void {
  const invoiceEvent = INVOICE_EVENTS[eventName]
  if (invoiceEvent) invoicesCounted.inc({ event: invoiceEvent })
  const currency = text(payload.currency)?.toUpperCase()
  if (!currency) return
  if (eventName === 'invoice.finalized' || eventName === 'invoice.voided') {
    const minor = toMinorUnits(text(payload.total), currency)
    const counter = eventName === 'invoice.finalized' ? invoicedAmountMinor : voidedAmountMinor
    if (minor !== undefined && minor > 0) counter.inc({ currency }, minor)
  }
  // Published for every recorded payment (invoices/payments.ts), with that payment's amount.
  if (eventName === 'invoice.payment_status_updated' && text(payload.payment_amount)) {
    paymentsRecorded.inc({ currency })
    const minor = toMinorUnits(text(payload.payment_amount), currency)
    if (minor !== undefined && minor > 0) paymentsAmountMinor.inc({ currency }, minor)
  }
}
