import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ValidationError } from '../../platform/errors.js'
import { taxRateValue, type TaxRateValueInput } from './tax-rate-value.js'

const fieldError = (field: string) => (err: unknown) => err instanceof ValidationError && err.field === field

describe('taxRateValue', () => {
  test('a percentage, normalized, without currency', () => {
    assert.deepEqual(taxRateValue({ percentage_value: '19.00' }), { percentage_value: '19', fixed_value: null, currency: null })
    assert.deepEqual(taxRateValue({ percentage_value: '7.250' }), { percentage_value: '7.25', fixed_value: null, currency: null })
    assert.equal(taxRateValue({ percentage_value: '0' }).percentage_value, '0')
    assert.equal(taxRateValue({ percentage_value: '100' }).percentage_value, '100')
  })

  test('a fixed value at the currency precision, currency upper-cased', () => {
    assert.deepEqual(taxRateValue({ fixed_value: '2.5', currency: 'usd' }), { percentage_value: null, fixed_value: '2.50', currency: 'USD' })
    assert.deepEqual(taxRateValue({ fixed_value: '0', currency: 'EUR' }), { percentage_value: null, fixed_value: '0.00', currency: 'EUR' })
    assert.equal(taxRateValue({ fixed_value: '300', currency: 'JPY' }).fixed_value, '300')
    assert.equal(taxRateValue({ fixed_value: '0.125', currency: 'KWD' }).fixed_value, '0.125')
  })

  const rejected: [string, TaxRateValueInput, string][] = [
    ['both values', { percentage_value: '10', fixed_value: '1', currency: 'USD' }, 'fixed_value'],
    ['neither value', {}, 'percentage_value'],
    ['a percentage with a currency', { percentage_value: '10', currency: 'USD' }, 'currency'],
    ['a percentage above 100', { percentage_value: '100.0001' }, 'percentage_value'],
    ['a negative percentage', { percentage_value: '-1' }, 'percentage_value'],
    ['a percentage that is not a decimal', { percentage_value: '1e2' }, 'percentage_value'],
    ['a fixed value without currency', { fixed_value: '1' }, 'currency'],
    ['a negative fixed value', { fixed_value: '-0.01', currency: 'USD' }, 'fixed_value'],
    ['a fixed value finer than cents', { fixed_value: '1.005', currency: 'USD' }, 'fixed_value'],
    ['a fixed value finer than yen', { fixed_value: '1.5', currency: 'JPY' }, 'fixed_value'],
    ['a bad currency', { fixed_value: '1', currency: 'US' }, 'currency'],
  ]
  for (const [what, input, field] of rejected) {
    test(`rejects ${what}, naming ${field}`, () => {
      assert.throws(() => taxRateValue(input), fieldError(field))
    })
  }
})
