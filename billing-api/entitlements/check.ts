// The usage reset period a customer's grants count usage in. The entitlement check itself is
// answered from memory by the live domain (billing-api/live/check.ts).
import type { CustomerGrant } from './customer-grants.js'
import type { UsageResetPeriod } from './entitlement.entity.js'
import { usagePeriodAt } from './usage-period.js'

/** Where a read of "usage so far" ends when the period never resets. */
export const OPEN_END = new Date('2100-01-01T00:00:00Z')

/** The current usage reset period of a customer's grants: the first enabled grant's, on its subscription's anchor. */
export function currentUsagePeriod(grants: CustomerGrant[], at: Date): { reset: UsageResetPeriod; start: Date; end: Date | null } | null {
  const first = grants.find((g) => g.entitlement.is_enabled && g.entitlement.usage_reset_period !== null)
  if (!first) return null
  const reset = first.entitlement.usage_reset_period!
  return { reset, ...usagePeriodAt(reset, first.subscription, at) }
}
