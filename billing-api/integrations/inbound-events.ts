// What each inbound provider event does (spec: "Inbound provider events handled"). Runs in
// the webhook's transaction, after the event id was recorded; a thrown error rolls both back
// and the provider retries. Returns a short outcome stored with the event.
//   invoice.paid (invoice.payment_succeeded): the linked invoice is marked paid (mark-paid.ts).
//     Not linked: ignored. Linked but not FINALIZED yet: failure, so the retry lands after finalization.
//   payment.succeeded / payment_intent.succeeded: the paying customer's provider customer and
//     payment method are stored (integration_payment_members) for automatic charging later.
//   subscription.activated / customer.subscription.created|updated with status active: the
//     incomplete subscription becomes active (subscriptions/activate-incomplete.ts) and its
//     FINALIZED unpaid invoices are queued for a push after the commit.
//   checkout.session.completed, invoice.payment_failed: inbound-payments.ts.
//   anything else (transaction completion, customer creation, address update, ...): recorded
//     as processed, nothing else.
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { activateIncompleteSubscription } from '../subscriptions/index.js'
import type { MappedEntityType } from '../queues.js'
import { field, idField, metadataId,} from './inbound-fields.js'
import { markInvoicePaid } from './mark-paid.js'
import { checkoutCompleted, invoicePaymentFailed } from './inbound-payments.js'
import { findByProviderId, requireEntity } from './mappings.js'
import type { InboundEvent } from './provider.js'
import type { IntegrationSyncJob } from '../queues.js'

export interface InboundContext {
  ctx: BillingContext
  tx: EntityManager
  scope: Scope
  provider: string
  event: InboundEvent
  /** jobs to enqueue once the transaction committed */
  resync: IntegrationSyncJob[]
}

/** Our entity for the provider record: its link, else our id in the record's metadata. */
async function localId(ic: InboundContext, type: MappedEntityType, providerId: string | undefined, metaKey: string): Promise<string | undefined> {
  if (providerId) {
    const m = await findByProviderId(ic.tx, ic.scope, type, ic.provider, providerId)
    if (m) return m.entity_id
  }
  const fromMeta = metadataId(ic.event.object, metaKey)
  if (!fromMeta) return undefined
  try {
    await requireEntity(ic.tx, ic.scope, type, fromMeta)
    return fromMeta
  } catch (err) {
    // Metadata naming no entity of ours is not our event; a database failure is rethrown (the
    // transaction rolls back and the provider redelivers).
    if (err instanceof ValidationError) return undefined
    throw err
  }
}

async function invoicePaid(ic: InboundContext): Promise<string> {
  const providerInvoiceId = idField(ic.event.object, 'id')
  const invoiceId = await localId(ic, 'invoice', providerInvoiceId, 'meterline_invoice_id')
  if (!invoiceId) return 'ignored: no linked invoice'
  const paid = await markInvoicePaid(ic.ctx, ic.tx, ic.scope, invoiceId, ic.provider, providerInvoiceId ?? ic.event.id)
  return paid ? `invoice ${invoiceId} marked paid` : `invoice ${invoiceId} already paid`
}

async function paymentSucceeded(ic: InboundContext): Promise<string> {
  const o = ic.event.object
  const providerCustomerId = idField(o, 'customer')
  const customerId = await localId(ic, 'customer', providerCustomerId, 'meterline_customer_id')
  if (!customerId || !providerCustomerId) return 'ignored: no linked customer'
  await ic.tx.getConnection().execute(
    `INSERT INTO integration_payment_members (id, tenant_id, environment_id, customer_id, provider, provider_customer_id, payment_method_id, last_payment_id, created_by, updated_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (tenant_id, environment_id, customer_id, provider) DO UPDATE SET
       provider_customer_id = EXCLUDED.provider_customer_id,
       payment_method_id = COALESCE(EXCLUDED.payment_method_id, integration_payment_members.payment_method_id),
       last_payment_id = EXCLUDED.last_payment_id, updated_at = now(), updated_by = EXCLUDED.updated_by`,
    [newId('paymem'), ic.scope.tenant_id, ic.scope.environment_id, customerId, ic.provider, providerCustomerId,
      idField(o, 'payment_method') ?? null, idField(o, 'id') ?? null, `system:${ic.provider}`, `system:${ic.provider}`],
    'run', ic.tx.getTransactionContext(),
  )
  return `payment member stored for customer ${customerId}`
}

async function subscriptionActivated(ic: InboundContext): Promise<string> {
  const o = ic.event.object
  if (ic.event.type.startsWith('customer.subscription.') && field(o, 'status') !== 'active') return 'ignored: subscription not active'
  const subscriptionId = await localId(ic, 'subscription', idField(o, 'id'), 'meterline_subscription_id')
  if (!subscriptionId) return 'ignored: no linked subscription'
  let changed: boolean
  try {
    changed = (await activateIncompleteSubscription(ic.ctx, ic.scope, subscriptionId)).changed
  } catch (err) {
    // A cancelled or draft subscription never becomes incomplete again: retrying cannot help.
    if (err instanceof InvalidOperationError) return `ignored: ${err.message}`
    throw err
  }
  if (!changed) return `subscription ${subscriptionId} already active`
  const pending = (await ic.tx.getConnection().execute(
    `SELECT id FROM invoices WHERE tenant_id = ? AND environment_id = ? AND subscription_id = ? AND status <> 'deleted'
        AND invoice_status = 'FINALIZED' AND payment_status NOT IN ('SUCCEEDED', 'OVERPAID', 'REFUNDED', 'PARTIALLY_REFUNDED')
      ORDER BY created_at, id`,
    [ic.scope.tenant_id, ic.scope.environment_id, subscriptionId], 'all', ic.tx.getTransactionContext(),
  )) as { id: string }[]
  for (const inv of pending) {
    ic.resync.push({ ...ic.scope, provider: ic.provider, entity_type: 'invoice', entity_id: inv.id, cause: `inbound-${ic.event.id}` })
  }
  return `subscription ${subscriptionId} activated; ${pending.length} pending invoice(s) queued for resync`
}

const HANDLERS: Record<string, (ic: InboundContext) => Promise<string>> = {
  'invoice.paid': invoicePaid,
  'invoice.payment_succeeded': invoicePaid,
  'payment.succeeded': paymentSucceeded,
  'payment_intent.succeeded': paymentSucceeded,
  'subscription.activated': subscriptionActivated,
  'customer.subscription.created': subscriptionActivated,
  'customer.subscription.updated': subscriptionActivated,
  'checkout.session.completed': checkoutCompleted,
  'invoice.payment_failed': invoicePaymentFailed,
}

export async function applyInboundEvent(ic: InboundContext): Promise<string> {
  const handler = HANDLERS[ic.event.type]
  return handler ? handler(ic) : `acknowledged: ${ic.event.type} has no effect`
}
