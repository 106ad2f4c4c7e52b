// Validation of a meter's definition (pure): which aggregation needs which input, the
// expression's syntax (a 400 naming the position of the error), the rounding.
import { ValidationError } from '../../platform/errors.js'
import { ExpressionError, parseExpression } from '../../schemas/meter-expression.js'
import { D } from '../pricing/index.js'
import { AGGREGATION_TYPES, ROUNDING_MODES, type MeterAggregation, type MeterRounding } from './meter.entity.js'

/** Aggregations over a numeric value: the ones an expression may feed. */
const NUMERIC = new Set(['SUM', 'MAX', 'LATEST', 'AVG', 'WEIGHTED_SUM'])

export function checkAggregation(agg: MeterAggregation): MeterAggregation {
  if (!AGGREGATION_TYPES.includes(agg.type)) throw new ValidationError(`aggregation.type must be one of ${AGGREGATION_TYPES.join(', ')}`, 'aggregation.type')
  const expression = agg.expression ?? null
  if (expression !== null) {
    if (!NUMERIC.has(agg.type)) throw new ValidationError(`aggregation.expression is not allowed for ${agg.type}; it feeds ${[...NUMERIC].join(', ')}`, 'aggregation.expression')
    if (agg.field) throw new ValidationError('give aggregation.field or aggregation.expression, not both', 'aggregation.expression')
    try {
      parseExpression(expression)
    } catch (err) {
      if (err instanceof ExpressionError) throw new ValidationError(`aggregation.expression: ${err.message}`, 'aggregation.expression')
      throw err
    }
  } else if (agg.type !== 'COUNT' && !agg.field) {
    throw new ValidationError(`aggregation.field (or aggregation.expression) is required for ${agg.type}`, 'aggregation.field')
  }
  if (agg.multiplier != null && D(agg.multiplier).lte(0)) throw new ValidationError('aggregation.multiplier must be greater than 0', 'aggregation.multiplier')
  return { type: agg.type, field: agg.field ?? null, expression, multiplier: agg.multiplier ?? null, group_by: agg.group_by ?? null }
}

export function checkRounding(r: MeterRounding | null | undefined): MeterRounding | null {
  if (r == null) return null
  if (!ROUNDING_MODES.includes(r.mode)) throw new ValidationError(`rounding.mode must be one of ${ROUNDING_MODES.join(', ')}`, 'rounding.mode')
  const precision = r.precision ?? 0
  if (!Number.isInteger(precision) || precision < 0 || precision > 12) throw new ValidationError('rounding.precision must be an integer from 0 to 12', 'rounding.precision')
  return { mode: r.mode, precision }
}
