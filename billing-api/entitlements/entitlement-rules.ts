// Which entitlement values each feature type takes. Run on the entitlement as it will be
// stored (after an update is merged), so create and update apply the same rules.
import { ValidationError } from '../../platform/errors.js'
import type { Feature } from '../features/feature.entity.js'
import type { Entitlement } from './entitlement.entity.js'

type Values = Pick<Entitlement, 'usage_limit' | 'is_soft_limit' | 'static_value' | 'usage_reset_period' | 'start_date' | 'end_date'>

export function validateEntitlementValues(feature: Feature, v: Values): void {
  const only = (field: string, type: Feature['type']) =>
    new ValidationError(`${field} is only allowed for ${type} features; feature ${feature.id} is ${feature.type}`, field)
  if (feature.type === 'metered') {
    if (v.usage_reset_period === null) {
      throw new ValidationError('usage_reset_period is required for metered features; NEVER keeps usage from resetting', 'usage_reset_period')
    }
  } else {
    if (v.usage_limit !== null) throw only('usage_limit', 'metered')
    if (v.is_soft_limit) throw only('is_soft_limit', 'metered')
    if (v.usage_reset_period !== null) throw only('usage_reset_period', 'metered')
  }
  if (feature.type === 'static') {
    if (!v.static_value) throw new ValidationError('static_value is required for static features', 'static_value')
  } else if (v.static_value !== null) {
    throw only('static_value', 'static')
  }
  if (v.start_date && v.end_date && v.end_date <= v.start_date) throw new ValidationError('end_date must be after start_date', 'end_date')
}
