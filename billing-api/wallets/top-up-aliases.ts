// A top-up in Flexprice's words: credits_to_add for credits, and its reasons for the two of ours
// they mean (credits bought and paid outside an invoice; credits given free). Its other reasons
// (invoiced purchases, grants, credit notes, adjustments) are other operations here, so refused.
import { ValidationError } from '../../platform/errors.js'
import type { TopUpInput } from './ledger.js'
import type { CreditReason } from './wallet.entity.js'

export const FLEXPRICE_CREDIT_REASONS: Record<string, CreditReason> = {
  PURCHASED_CREDIT_DIRECT: 'PURCHASED',
  FREE_CREDIT_GRANT: 'FREE_CREDIT',
}

type TopUpBody = Omit<TopUpInput, 'transaction_reason'> & { transaction_reason: string; credits_to_add?: string }

export function topUpInput(body: TopUpBody): TopUpInput {
  const { credits_to_add, ...rest } = body
  if (credits_to_add !== undefined && rest.credits !== undefined) throw new ValidationError('credits_to_add: send credits or credits_to_add, not both', 'credits_to_add')
  const reason = FLEXPRICE_CREDIT_REASONS[rest.transaction_reason] ?? (rest.transaction_reason as CreditReason)
  return { ...rest, transaction_reason: reason, ...(credits_to_add !== undefined ? { credits: credits_to_add } : {}) }
}
