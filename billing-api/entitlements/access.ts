// Pure: what a customer's grants of one feature add up to, and what is left of a limit.
// - enabled when at least one live grant is enabled (disabled grants add nothing);
// - limits of the enabled grants add up (plan plus add-ons, as billing caps them); one
//   enabled grant without a limit makes the feature unlimited;
// - a soft limit on any enabled grant makes the sum soft: usage past it is allowed and shown;
// - the usage reset period is the first enabled grant's (by display_order, then age).
import { D } from '../pricing/index.js'
import type { UsageResetPeriod } from './entitlement.entity.js'

export interface GrantValues {
  is_enabled: boolean
  usage_limit: number | null
  is_soft_limit: boolean
  static_value: string | null
  usage_reset_period: UsageResetPeriod | null
}

export interface CombinedGrant {
  is_enabled: boolean
  /** decimal string; null: unlimited */
  usage_limit: string | null
  is_soft_limit: boolean
  static_value: string | null
  usage_reset_period: UsageResetPeriod | null
}

/** `grants` in display order. */
export function combineGrants(grants: GrantValues[]): CombinedGrant {
  const enabled = grants.filter((g) => g.is_enabled)
  if (enabled.length === 0) return { is_enabled: false, usage_limit: null, is_soft_limit: false, static_value: null, usage_reset_period: null }
  const unlimited = enabled.some((g) => g.usage_limit === null)
  return {
    is_enabled: true,
    usage_limit: unlimited ? null : enabled.reduce((sum, g) => sum.plus(g.usage_limit!), D(0)).toFixed(),
    is_soft_limit: enabled.some((g) => g.is_soft_limit),
    static_value: enabled.find((g) => g.static_value !== null)?.static_value ?? null,
    usage_reset_period: enabled.find((g) => g.usage_reset_period !== null)?.usage_reset_period ?? null,
  }
}

export interface Allowance {
  /** decimal string; null when unlimited */
  remaining: string | null
  /** true while usage may continue: enabled and (unlimited, soft, or below the limit) */
  has_access: boolean
}

export function allowance(grant: Pick<CombinedGrant, 'is_enabled' | 'usage_limit' | 'is_soft_limit'>, usage: string): Allowance {
  if (!grant.is_enabled) return { remaining: null, has_access: false }
  if (grant.usage_limit === null) return { remaining: null, has_access: true }
  const left = D(grant.usage_limit).minus(usage)
  return { remaining: (left.isNegative() ? D(0) : left).toFixed(), has_access: grant.is_soft_limit || left.gt(0) }
}
