// cadence and scope, the names Flexprice's SDK gives to what a grant's period and owner already
// say: accepted when they agree with them, and written on every grant.
import { ValidationError } from '../../platform/errors.js'
import type { CreditGrant } from './credit-grant.entity.js'

export const CREDIT_GRANT_CADENCES = ['ONETIME', 'RECURRING'] as const
export const CREDIT_GRANT_SCOPES = ['PLAN', 'SUBSCRIPTION'] as const

export interface CadenceAndScope {
  cadence?: (typeof CREDIT_GRANT_CADENCES)[number]
  scope?: (typeof CREDIT_GRANT_SCOPES)[number]
}

export const grantCadence = (g: Pick<CreditGrant, 'period'>) => (g.period === 'ONETIME' ? 'ONETIME' : 'RECURRING')
export const grantScope = (g: { plan_id?: string | null }) => (g.plan_id ? 'PLAN' : 'SUBSCRIPTION')

export function checkCadenceAndScope(input: CadenceAndScope & Pick<CreditGrant, 'period'> & { plan_id?: string }): void {
  if (input.cadence !== undefined && input.cadence !== grantCadence(input)) {
    throw new ValidationError(`cadence: ${input.cadence} contradicts period ${input.period} (a ONETIME grant has period ONETIME)`, 'cadence')
  }
  if (input.scope !== undefined && input.scope !== grantScope(input)) {
    throw new ValidationError(`scope: ${input.scope} needs ${input.scope === 'PLAN' ? 'plan_id' : 'subscription_id'}`, 'scope')
  }
}
