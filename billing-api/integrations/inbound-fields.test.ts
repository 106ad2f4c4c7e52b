import { test } from 'node:test'
import assert from 'node:assert/strict'
import { field, idField, metadataId, toCamel } from './inbound-fields.js'

test('fields are read in snake_case or camelCase', () => {
  assert.equal(toCamel('payment_method'), 'paymentMethod')
  assert.equal(toCamel('meterline_invoice_id'), 'meterlineInvoiceId')
  assert.equal(field({ amount_paid: 1 }, 'amount_paid'), 1)
  assert.equal(field({ amountPaid: 2 }, 'amount_paid'), 2)
  assert.equal(field(undefined, 'x'), undefined)
  assert.equal(idField({ customer: 'cus_1' }, 'customer'), 'cus_1')
  assert.equal(idField({ customer: { id: 'cus_2', object: 'customer' } }, 'customer'), 'cus_2', 'expanded objects')
  assert.equal(idField({ paymentMethod: 'pm_1' }, 'payment_method'), 'pm_1')
  assert.equal(idField({ customer: '' }, 'customer'), undefined)
  assert.equal(metadataId({ metadata: { meterline_invoice_id: 'inv_1' } }, 'meterline_invoice_id'), 'inv_1')
  assert.equal(metadataId({ metadata: { meterlineInvoiceId: 'inv_2' } }, 'meterline_invoice_id'), 'inv_2')
  assert.equal(metadataId({}, 'meterline_invoice_id'), undefined)
})
