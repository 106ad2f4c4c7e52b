// Rounding of a meter's aggregated quantity, applied where usage is read (the usage API, invoice
// quantities, commitment windows), never to stored bucket values. UP and DOWN round toward
// +infinity and -infinity (a negative quantity rounds UP toward zero); HALF_UP sends ties away
// from zero, like the money rule.
import { Decimal } from 'decimal.js'
import type { MeterRounding } from './meter.entity.js'

const MODE = { UP: Decimal.ROUND_CEIL, DOWN: Decimal.ROUND_FLOOR, HALF_UP: Decimal.ROUND_HALF_UP } as const

export function roundQuantity(value: string, rounding: MeterRounding | null | undefined): string {
  if (!rounding || rounding.mode === 'NONE') return value
  return new Decimal(value).toDecimalPlaces(rounding.precision, MODE[rounding.mode]).toFixed()
}
