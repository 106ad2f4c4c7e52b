// What a credit note may credit. Pure: decimals in, the note's total out, or a ValidationError
// naming the limit. A line credits at most what is left of its invoice line: the line's amount
// after its discounts, less what earlier live notes (DRAFT or FINALIZED) credited on it. The note
// credits at most what is still owed on the invoice (amount_remaining) less what DRAFT notes
// reserve (a FINALIZED note already lowered amount_remaining).
import type { Decimal } from 'decimal.js'
import { ValidationError } from '../../platform/errors.js'
import { D, currencyPrecision, toMoneyString } from '../pricing/index.js'

export interface CreditableLine {
  /** the invoice line's amount less its line and invoice-level discounts */
  net: Decimal
  /** what live credit notes already credit on it */
  credited: Decimal
}

export interface RequestedCredit {
  invoice_line_item_id: string
  amount: string
}

export interface CreditableInvoice {
  currency: string
  amount_remaining: string
  /** total of the invoice's DRAFT credit notes */
  reserved: Decimal
  lines: ReadonlyMap<string, CreditableLine>
}

/** The note's total, after checking every requested line and the invoice's limit. */
export function creditNoteTotal(invoice: CreditableInvoice, requested: readonly RequestedCredit[]): Decimal {
  const money = (v: Decimal) => toMoneyString(v, invoice.currency)
  const asked = new Map<string, Decimal>()
  requested.forEach((r, i) => {
    const amount = D(r.amount)
    const field = `line_items[${i}].amount`
    if (amount.lte(0)) throw new ValidationError(`${field} must be greater than 0`, field)
    if (amount.decimalPlaces() > currencyPrecision(invoice.currency)) {
      throw new ValidationError(`${field} has more decimals than ${invoice.currency} allows (${currencyPrecision(invoice.currency)})`, field)
    }
    const line = invoice.lines.get(r.invoice_line_item_id)
    if (!line) throw new ValidationError(`line_items[${i}].invoice_line_item_id: ${r.invoice_line_item_id} is not a line of the invoice`, `line_items[${i}].invoice_line_item_id`)
    const sum = (asked.get(r.invoice_line_item_id) ?? D(0)).plus(amount)
    const left = D.max(line.net.minus(line.credited), 0)
    if (sum.gt(left)) throw new ValidationError(`line_items[${i}]: ${money(sum)} is more than what is left to credit on line ${r.invoice_line_item_id} (${money(left)})`, field)
    asked.set(r.invoice_line_item_id, sum)
  })
  const total = [...asked.values()].reduce((a, b) => a.plus(b), D(0))
  const owed = D.max(D(invoice.amount_remaining).minus(invoice.reserved), 0)
  if (total.gt(owed)) {
    throw new ValidationError(`the credit note's total ${money(total)} is more than what is left to credit on the invoice (${money(owed)}: amount_remaining less draft credit notes)`, 'line_items')
  }
  return total
}
