// The credit grant application job's use case. For every ACTIVE or TRIALING subscription with
// published grants (on its plan or on the subscription itself):
//   1. insert one PENDING application per due grant period (grant-schedule.ts, catch-up rule
//      included) with INSERT ... ON CONFLICT (idempotency_key) DO NOTHING;
//   2. apply the PENDING ones (and FAILED ones with retries left) oldest first, by topping up the
//      customer's wallet in the subscription's currency: FREE_CREDIT, the grant's priority, the
//      expiry counted from period_start, and the application's idempotency key as the top-up key;
//   3. mark each APPLIED (applied_at), FAILED (failure_reason, retry_count + 1), or SKIPPED when
//      its credits would already have expired (a wallet refuses a top-up expiring in the past).
//
// Customers without a wallet in that currency get a PREPAID one (conversion rate: the grant's,
// else 1), because a grant's credits need somewhere to live.
//
// Concurrency: each subscription is claimed with SELECT ... FOR UPDATE SKIP LOCKED in its own
// transaction, so two runs never work on the same subscription at once. The top-up commits in
// its own transaction (the wallet's); if the application's status update is then lost, the
// next run's top-up finds its key used (409) and the application is marked APPLIED without a
// second credit. The wallet's unique (wallet_id, idempotency_key) is the last line of defence.
import { AlreadyExistsError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { SubscriptionSchema, type Subscription } from '../subscriptions/subscription.entity.js'
import { topUpWallet, createWallet } from '../wallets/index.js'
import { WalletSchema, type Wallet } from '../wallets/wallet.entity.js'
import { CreditGrantApplicationSchema, type CreditGrantApplication } from './application.entity.js'
import { CreditGrantSchema, type CreditGrant } from './credit-grant.entity.js'
import { applicationKey, grantExpiry, grantSchedule } from './grant-schedule.js'

/** created_by / updated_by of what the job writes */
export const GRANT_JOB_ACTOR = 'system:credit-grant-application'
/** a FAILED application is retried by later runs until it has failed this many times */
export const MAX_APPLICATION_RETRIES = 3

export interface ApplyGrantsOptions {
  batchSize?: number
  /** limit the run to one tenant (operators' on-demand runs, tests) */
  tenantId?: string
}

export interface ApplyGrantsResult {
  subscriptions: number
  applied: number
  failed: number
  skipped: number
}

const CANDIDATES_SQL = (byTenant: boolean) => `
  SELECT s.id, s.tenant_id, s.environment_id FROM subscriptions s
   WHERE s.status = 'published' AND s.subscription_status IN ('ACTIVE', 'TRIALING') AND s.id > ?
     ${byTenant ? 'AND s.tenant_id = ?' : ''}
     AND EXISTS (SELECT 1 FROM credit_grants g
                  WHERE g.tenant_id = s.tenant_id AND g.environment_id = s.environment_id AND g.status = 'published'
                    AND (g.plan_id = s.plan_id OR g.subscription_id = s.id))
   ORDER BY s.id
   LIMIT ?`

const CLAIM_SQL = `
  SELECT * FROM subscriptions
   WHERE id = ? AND tenant_id = ? AND environment_id = ? AND status = 'published' AND subscription_status IN ('ACTIVE', 'TRIALING')
   FOR UPDATE SKIP LOCKED`

const INSERT_SQL = `
  INSERT INTO credit_grant_applications
    (id, tenant_id, environment_id, credit_grant_id, subscription_id, credits, scheduled_for, period_start, period_end,
     application_status, retry_count, idempotency_key, metadata, created_by, updated_by)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', 0, ?, '{}'::jsonb, ?, ?)
  ON CONFLICT (idempotency_key) DO NOTHING`

const MARK_SQL = `
  UPDATE credit_grant_applications
     SET application_status = ?, applied_at = ?, failure_reason = ?, retry_count = retry_count + ?, updated_at = now(), updated_by = ?
   WHERE id = ? AND tenant_id = ? AND environment_id = ?`

export async function applyDueCreditGrants(ctx: BillingContext, opts: ApplyGrantsOptions = {}): Promise<ApplyGrantsResult> {
  const batchSize = opts.batchSize ?? 100
  const result: ApplyGrantsResult = { subscriptions: 0, applied: 0, failed: 0, skipped: 0 }
  let after = ''
  for (;;) {
    const em = ctx.orm.em.fork()
    const params = [after, ...(opts.tenantId ? [opts.tenantId] : []), batchSize]
    const batch = (await em.getConnection().execute(CANDIDATES_SQL(!!opts.tenantId), params)) as { id: string; tenant_id: string; environment_id: string }[]
    for (const candidate of batch) {
      if (await applyForSubscription(ctx, candidate, result)) result.subscriptions++
    }
    if (batch.length < batchSize) return result
    after = batch[batch.length - 1].id
  }
}

/** Returns false when the subscription is locked by another run (that run handles it). */
async function applyForSubscription(
  ctx: BillingContext, candidate: { id: string; tenant_id: string; environment_id: string }, result: ApplyGrantsResult,
): Promise<boolean> {
  const scope: Scope = { tenant_id: candidate.tenant_id, environment_id: candidate.environment_id }
  return ctx.orm.em.fork().transactional(async (tx) => {
    const run = (sql: string, params: unknown[]) => tx.getConnection().execute(sql, params, 'all', tx.getTransactionContext())
    const rows = await run(CLAIM_SQL, [candidate.id, scope.tenant_id, scope.environment_id])
    if (rows.length === 0) return false
    const sub = tx.map(SubscriptionSchema, rows[0])
    const now = ctx.clock.now()
    const grants = await tx.find(CreditGrantSchema, { ...scope, status: 'published', $or: [{ plan_id: sub.plan_id }, { subscription_id: sub.id }] })
    for (const grant of grants) {
      for (const period of grantSchedule(grant, sub, now, 0).due) {
        await run(INSERT_SQL, [
          newId('cgapp'), scope.tenant_id, scope.environment_id, grant.id, sub.id, grant.credits, period.scheduled_for,
          period.period_start, period.period_end, applicationKey(grant.id, sub.id, period.period_start), GRANT_JOB_ACTOR, GRANT_JOB_ACTOR,
        ])
      }
    }
    const byId = new Map(grants.map((g) => [g.id, g]))
    const open = await tx.find(
      CreditGrantApplicationSchema,
      {
        ...scope, subscription_id: sub.id, credit_grant_id: { $in: [...byId.keys()] }, scheduled_for: { $lte: now },
        $or: [{ application_status: 'PENDING' }, { application_status: 'FAILED', retry_count: { $lt: MAX_APPLICATION_RETRIES } }],
      },
      { orderBy: { scheduled_for: 'asc', idempotency_key: 'asc' }, refresh: true },
    )
    for (const application of open) {
      const outcome = await applyOne(ctx, scope, sub, byId.get(application.credit_grant_id)!, application)
      const failed = outcome.status === 'FAILED' ? 1 : 0
      await run(MARK_SQL, [
        outcome.status, outcome.status === 'APPLIED' ? now : null, outcome.reason ?? null, failed, GRANT_JOB_ACTOR,
        application.id, scope.tenant_id, scope.environment_id,
      ])
      if (outcome.status === 'APPLIED') result.applied++
      else if (outcome.status === 'FAILED') result.failed++
      else result.skipped++
    }
    return true
  })
}

type Outcome = { status: 'APPLIED' | 'FAILED' | 'SKIPPED'; reason?: string }

async function applyOne(ctx: BillingContext, scope: Scope, sub: Subscription, grant: CreditGrant, application: CreditGrantApplication): Promise<Outcome> {
  const expiry = grantExpiry(application.period_start, grant.expiration_duration, grant.expiration_duration_unit)
  if (expiry && expiry <= ctx.clock.now()) {
    return { status: 'SKIPPED', reason: `the credits expired at ${expiry.toISOString()}, before they could be applied` }
  }
  try {
    const wallet = await walletFor(ctx, scope, sub, grant)
    await topUpWallet(ctx.orm.em.fork(), ctx.clock, scope, GRANT_JOB_ACTOR, wallet.id, {
      credits: application.credits,
      transaction_reason: 'FREE_CREDIT',
      priority: grant.priority,
      expiry_date: expiry ? expiry.toISOString() : null,
      idempotency_key: application.idempotency_key,
      metadata: { credit_grant_id: grant.id, subscription_id: sub.id, credit_grant_application_id: application.id },
    })
    return { status: 'APPLIED' }
  } catch (err) {
    // The key is already on the wallet: an earlier run credited it and lost its status update.
    if (err instanceof AlreadyExistsError) return { status: 'APPLIED' }
    return { status: 'FAILED', reason: err instanceof Error ? err.message : String(err) }
  }
}

/** The customer's published wallet in the subscription's currency, created (PREPAID) when missing. */
async function walletFor(ctx: BillingContext, scope: Scope, sub: Subscription, grant: CreditGrant): Promise<Wallet> {
  const find = () => ctx.orm.em.fork().findOne(WalletSchema, { ...scope, customer_id: sub.customer_id, currency: sub.currency, status: 'published' })
  const existing = await find()
  if (existing) return existing
  try {
    return (await createWallet(ctx.orm.em.fork(), ctx.clock, scope, GRANT_JOB_ACTOR, {
      customer_id: sub.customer_id, currency: sub.currency, wallet_type: 'PREPAID', conversion_rate: grant.conversion_rate ?? undefined,
      metadata: { created_for: 'credit_grant', credit_grant_id: grant.id },
    })).wallet
  } catch (err) {
    // A concurrent run (another subscription of the same customer) created it first.
    const raced = await find()
    if (raced) return raced
    throw err
  }
}
