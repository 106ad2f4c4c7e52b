import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { InvalidOperationError } from '../../platform/errors.js'
import { D, PricingInputError } from '../pricing/index.js'
import { taxAmount, type TaxTerms } from './tax-amount.js'

const percent = (p: string): TaxTerms => ({ percentage_value: p, fixed_value: null, currency: null })
const fixedFee = (value: string, currency: string): TaxTerms => ({ percentage_value: null, fixed_value: value, currency })

function tax(rate: TaxTerms, taxable: string, currency: string, places: number): string {
  const t = taxAmount(rate, new D(taxable), currency)
  assert.ok(t instanceof D, 'a Decimal of the pricing engine')
  return t.toFixed(places)
}

describe('taxAmount: percentage, rounded half-up to the currency minor unit', () => {
  const cases: [pct: string, taxable: string, currency: string, places: number, expected: string, why: string][] = [
    ['15', '33.33', 'USD', 2, '5.00', '4.9995 rounds up'],
    ['19', '100.00', 'EUR', 2, '19.00', 'exact'],
    ['7.25', '19.99', 'USD', 2, '1.45', '1.449275'],
    ['8.875', '10.00', 'USD', 2, '0.89', '0.8875'],
    ['5', '0.10', 'USD', 2, '0.01', '0.005 is a tie: up (banker\'s would give 0.00)'],
    ['10', '1005', 'JPY', 0, '101', '100.5 is a tie: up'],
    ['8', '1234', 'JPY', 0, '99', '98.72'],
    ['5', '2.345', 'KWD', 3, '0.117', '0.11725'],
    ['10', '1.225', 'KWD', 3, '0.123', '0.1225 is a tie: up'],
    ['0', '100.00', 'USD', 2, '0.00', 'a zero rate'],
    ['100', '12.34', 'USD', 2, '12.34', 'the whole amount'],
    ['10', '-10.05', 'USD', 2, '-1.01', 'a credit: -1.005, away from zero'],
    ['20', '0', 'USD', 2, '0.00', 'nothing taxable'],
  ]
  for (const [pct, taxable, currency, places, expected, why] of cases) {
    test(`${pct}% of ${taxable} ${currency} = ${expected} (${why})`, () => {
      assert.equal(tax(percent(pct), taxable, currency, places), expected)
    })
  }

  test('rejects a taxable amount that is not a finite decimal', () => {
    assert.throws(() => taxAmount(percent('10'), new D(NaN), 'USD'), PricingInputError)
  })
})

describe('taxAmount: fixed', () => {
  test('the fixed value whatever the taxable amount', () => {
    assert.equal(tax(fixedFee('2.50', 'USD'), '100.00', 'USD', 2), '2.50')
    assert.equal(tax(fixedFee('2.50', 'USD'), '0', 'USD', 2), '2.50')
    assert.equal(tax(fixedFee('300', 'JPY'), '12345', 'JPY', 0), '300')
    assert.equal(tax(fixedFee('0.125', 'KWD'), '1.000', 'kwd', 3), '0.125')
  })

  test('only in its own currency', () => {
    assert.throws(
      () => taxAmount(fixedFee('2.50', 'EUR'), new D('100'), 'USD'),
      (err: unknown) => err instanceof InvalidOperationError && /EUR.*USD/.test(err.message),
    )
  })
})
