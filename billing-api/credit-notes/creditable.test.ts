// The credit note's limits, worked out by hand.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { D } from '../pricing/index.js'
import { creditNoteTotal, type CreditableInvoice } from './creditable.js'

const invoice = (over: Partial<CreditableInvoice> = {}): CreditableInvoice => ({
  currency: 'USD',
  amount_remaining: '25.99',
  reserved: D(0),
  // Seats 25.00 less a 5.00 discount = 20.00, 2.50 of it already credited; Setup 4.99
  lines: new Map([['li_seats', { net: D('20.00'), credited: D('2.50') }], ['li_setup', { net: D('4.99'), credited: D(0) }]]),
  ...over,
})

test('the total sums the lines; a line may be named twice within what is left of it', () => {
  assert.equal(creditNoteTotal(invoice(), [{ invoice_line_item_id: 'li_seats', amount: '10' }, { invoice_line_item_id: 'li_seats', amount: '7.50' }, { invoice_line_item_id: 'li_setup', amount: '4.99' }]).toFixed(2), '22.49')
})

test('a line credits at most its discounted amount less earlier credits', () => {
  assert.throws(() => creditNoteTotal(invoice(), [{ invoice_line_item_id: 'li_seats', amount: '17.51' }]), /17\.51 is more than what is left to credit on line li_seats \(17\.50\)/)
  assert.throws(() => creditNoteTotal(invoice(), [{ invoice_line_item_id: 'li_seats', amount: '10' }, { invoice_line_item_id: 'li_seats', amount: '7.51' }]), /17\.51/)
})

test('the note credits at most amount_remaining less what drafts reserve', () => {
  // 25.99 owed, 5.00 reserved by a draft: 20.99 left
  const reserved = invoice({ reserved: D('5.00') })
  assert.equal(creditNoteTotal(reserved, [{ invoice_line_item_id: 'li_seats', amount: '16.00' }, { invoice_line_item_id: 'li_setup', amount: '4.99' }]).toFixed(2), '20.99')
  assert.throws(() => creditNoteTotal(reserved, [{ invoice_line_item_id: 'li_seats', amount: '16.01' }, { invoice_line_item_id: 'li_setup', amount: '4.99' }]), /21\.00 is more than what is left to credit on the invoice \(20\.99/)
})

test('zero, too many decimals and foreign lines are refused', () => {
  assert.throws(() => creditNoteTotal(invoice(), [{ invoice_line_item_id: 'li_setup', amount: '0' }]), /greater than 0/)
  assert.throws(() => creditNoteTotal(invoice(), [{ invoice_line_item_id: 'li_setup', amount: '1.001' }]), /more decimals than USD allows \(2\)/)
  assert.throws(() => creditNoteTotal(invoice(), [{ invoice_line_item_id: 'li_other', amount: '1' }]), /not a line of the invoice/)
})
