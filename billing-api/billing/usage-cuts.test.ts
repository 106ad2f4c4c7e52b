// Pure rule of the automatic threshold cuts: which charges an invoice carries once usage
// before the last cut has been billed by AUTO_INVOICE_THRESHOLD invoices.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Charge } from './charges.js'
import { chargesAfterCut } from './usage-cuts.js'

const d = (s: string) => new Date(s)
const charge = (name: string, type: 'FIXED' | 'USAGE', cadence: 'ADVANCE' | 'ARREAR', start: string, end: string): Charge =>
  ({ lineItem: { id: name } as Charge['lineItem'], price: { type, invoice_cadence: cadence } as Charge['price'], periodStart: d(start), periodEnd: d(end) })
const view = (cs: Charge[]) => cs.map((c) => [c.lineItem.id, c.periodStart.toISOString(), c.periodEnd.toISOString()])

const cycle = [
  charge('seat', 'FIXED', 'ARREAR', '2026-10-01T00:00:00Z', '2026-11-01T00:00:00Z'),
  charge('fee', 'FIXED', 'ADVANCE', '2026-11-01T00:00:00Z', '2026-12-01T00:00:00Z'),
  charge('calls', 'USAGE', 'ARREAR', '2026-10-01T00:00:00Z', '2026-11-01T00:00:00Z'),
]

test('the cycle invoice measures arrear usage from the last cut on; fixed charges are untouched', () => {
  assert.deepEqual(view(chargesAfterCut(cycle, 'SUBSCRIPTION_CYCLE', d('2026-10-10T12:00:00Z'))), [
    ['seat', '2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z'],
    ['fee', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
    ['calls', '2026-10-10T12:00:00.000Z', '2026-11-01T00:00:00.000Z'],
  ])
  assert.deepEqual(view(chargesAfterCut(cycle, 'SUBSCRIPTION_CYCLE', null)), view(cycle), 'no cut: unchanged')
})

test('a threshold invoice carries arrear usage only', () => {
  assert.deepEqual(view(chargesAfterCut(cycle, 'AUTO_INVOICE_THRESHOLD', null)), [['calls', '2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z']])
})

test('a window that ends at or before the cut (a backdated end) bills no usage again', () => {
  const proration = [charge('calls', 'USAGE', 'ARREAR', '2026-10-01T00:00:00Z', '2026-10-08T00:00:00Z')]
  assert.deepEqual(chargesAfterCut(proration, 'PRORATION', d('2026-10-10T12:00:00Z')), [])
  assert.deepEqual(chargesAfterCut(proration, 'PRORATION', d('2026-10-08T00:00:00Z')), [])
})

test('the create invoice (advance charges) is never cut', () => {
  const create = [charge('calls', 'USAGE', 'ARREAR', '2026-10-01T00:00:00Z', '2026-11-01T00:00:00Z')]
  assert.deepEqual(view(chargesAfterCut(create, 'SUBSCRIPTION_CREATE', d('2026-10-10T00:00:00Z'))), view(create))
})
