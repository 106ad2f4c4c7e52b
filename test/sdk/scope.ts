// Which SDK operations the compatibility suite must pass: those whose resource the spec
// (../shared/spec/billing-service-spec.md) covers. Everything else is out of scope, each with
// its reason; an operation of an SDK class not named here is in scope.
import type { SdkOperation } from './operations.js'

/** Whole SDK classes whose resource the spec does not cover. */
const OUT_OF_SCOPE_CLASSES: Record<string, string> = {
  alerts: 'alert logs: no such resource in the spec (its usage alerts fire system events)',
  costs: 'cost sheets and margin analytics: no such resource in the spec',
  rbac: 'RBAC roles: the spec names only the built-in super_admin role, not a roles API',
  scheduledTasks: 'scheduled export tasks: no such resource in the spec (its recurring jobs are workflows without an API)',
  tasks: 'import/export tasks: no such resource in the spec',
  workflows: 'workflow runs: the spec runs recurring jobs in a workflow engine but gives them no API',
}

const providerWebhook = (provider: string) =>
  `inbound ${provider} webhook: called by ${provider} with its own signature, not by an SDK user, and a provider the spec does not name`

/** Single operations out of scope, by `<class>.<method>`. */
const OUT_OF_SCOPE_OPERATIONS: Record<string, string> = {
  'subscriptions.pauseSubscription': 'the spec removed subscription pause and resume ("Removed operations")',
  'subscriptions.resumeSubscription': 'the spec removed subscription pause and resume ("Removed operations")',
  'subscriptions.listSubscriptionPauses': 'the spec removed subscription pause and resume ("Removed operations")',
  'subscriptions.listAllSubscriptionSchedules': 'subscription schedules are not in the spec (its scheduled changes are phases), and the SDK sends them to /v1/v1/...',
  'subscriptions.getSubscriptionSchedule': 'subscription schedules are not in the spec (its scheduled changes are phases), and the SDK sends them to /v1/v1/...',
  'subscriptions.listSubscriptionSchedules': 'subscription schedules are not in the spec (its scheduled changes are phases), and the SDK sends them to /v1/v1/...',
  'subscriptions.cancelSubscriptionSchedule': 'subscription schedules are not in the spec (its scheduled changes are phases), and the SDK sends them to /v1/v1/...',
  'events.getHuggingfaceInferenceData': 'Flexprice\'s Hugging Face inference demo data: not an event or usage operation of the spec',
  'tenants.getTenantBillingUsage': 'what Flexprice bills the tenant itself for its own plan: not the spec\'s tenant resource',
  'webhooks.handleChargebeeWebhook': providerWebhook('Chargebee'),
  'webhooks.handleHubspotWebhook': providerWebhook('HubSpot'),
  'webhooks.handleMoyasarWebhook': providerWebhook('Moyasar'),
  'webhooks.handleNomodWebhook': providerWebhook('Nomod'),
  'webhooks.handleQuickbooksWebhook': providerWebhook('QuickBooks'),
  'webhooks.handleRazorpayWebhook': providerWebhook('Razorpay'),
}

/** Why `op` is out of scope, or undefined when the suite must pass it. */
export function outOfScope(op: SdkOperation): string | undefined {
  return OUT_OF_SCOPE_OPERATIONS[op.name] ?? OUT_OF_SCOPE_CLASSES[op.name.split('.')[0]!]
}
