// One real request per operation of the served OpenAPI document, against the real platform
// (Postgres, Redis, chDB, the Kafka-protocol broker), each answer checked against the schema the
// document declares for its status (contract-client.ts): an undeclared status, a body the schema
// does not describe, or a property the serializer would drop fails. Every operation answers a
// success here except those listed in ERROR_ONLY, each with its reason.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import Stripe from 'stripe'
import { ManualClock } from '../../platform/clock.js'
import { compileAllDeferred } from '../../platform/compile-on-first-use.js'
import { StripeStandIn } from '../support/stripe-stand-in.js'
import { eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'
import { ContractClient } from './contract-client.js'
import { DocumentValidator, type OpenApiDoc } from './document-validator.js'
import { RawBodies } from './raw-bodies.js'

const ADMIN_TOKEN = randomBytes(24).toString('hex')
const WEBHOOK_SECRET = 'whsec_contract0123456789abcdefghijkl'
const NOW = new Date('2026-09-15T10:00:00Z')

/** Operations this test reaches only with an error answer, and why not with a success. */
const ERROR_ONLY: Record<string, string> = {
  'POST /v1/admin/queues/{queue}/jobs/{id}/retry': 'only a failed job can be retried, and no job fails in this run (its 400 is checked)',
  'POST /v1/payments/{id}/process': 'a recorded payment is applied when recorded: processing it is refused (its 400 is checked)',
  'DELETE /v1/payments/{id}': 'a recorded payment is on its invoice and is not deleted (its 400 is checked)',
}

const raw = new RawBodies()
let p: TestPlatform
let stripe: StripeStandIn
let c: ContractClient
let validator: DocumentValidator
const clock = new ManualClock(NOW)

before(async () => {
  stripe = await new StripeStandIn().start()
  p = await startTestPlatform({
    clock,
    onHttpServer: raw.install,
    // the outbox relay makes the webhook deliveries the deliveries routes list
    relay: true,
    config: {
      adminToken: ADMIN_TOKEN,
      signupEnabled: true,
      integrations: { encryptionKey: Buffer.alloc(32, 7), stripeApiBase: stripe.url, rateLimitPerSecond: 50 },
    },
  })
  const doc = (await (await fetch(`${p.url}/v1/docs/openapi.json`)).json()) as OpenApiDoc
  validator = new DocumentValidator(doc)
  c = new ContractClient(p.url, validator, raw)
})
after(async () => {
  await p?.stop()
  await stripe?.stop()
})

const period = { start_time: '2026-09-01T00:00:00Z', end_time: '2026-10-01T00:00:00Z' }

test('every operation answers what the OpenAPI document declares', async () => {
  const t = await p.newTenant('Contract')
  const api = c.as({ 'x-api-key': t.apiKey })
  const admin = c.as({ authorization: `Bearer ${ADMIN_TOKEN}` })
  const id = (x: { body: { id: string } }) => x.body.id

  // --- tenant, users, keys, environments
  await api('GET /v1/tenants/{id}', { params: { id: t.tenantId } })
  await api('PUT /v1/tenants/update', { body: { billing_details: { email: 'billing@contract.test' } } })
  await api('GET /v1/environments')
  const env = await api('POST /v1/environments', { body: { name: 'staging', type: 'development' }, expect: 201 })
  const user = await api('POST /v1/users', { body: { name: 'a-bot' }, expect: 201 })
  await api('GET /v1/users')
  await api('GET /v1/users/{id}', { params: { id: id(user) } })
  await api('GET /v1/users/me')
  await api('POST /v1/users/search', { body: { type: 'service_account' } })
  await api('PUT /v1/environments/{id}', { params: { id: id(env) }, body: { name: 'staging-2' } })
  await api('PUT /v1/users/{id}', { params: { id: id(user) }, body: { name: 'b-bot' } })
  const key = await api('POST /v1/secrets/api/keys', { body: { name: 'ci', user_id: id(user), expires_at: '2099-01-01T00:00:00Z' }, expect: 201 })
  await api('GET /v1/secrets/api/keys')
  await api('GET /v1/secrets/api/keys/current')

  // --- events and meters
  const meter = await api('POST /v1/meters', { body: { name: 'Tokens', event_name: 'llm_call', aggregation: { type: 'SUM', field: 'tokens' } }, expect: 201 })
  await api('GET /v1/meters')
  await api('GET /v1/meters/{id}', { params: { id: id(meter) } })
  await api('PUT /v1/meters/{id}', { params: { id: id(meter) }, body: { name: 'LLM tokens' } })
  await api('POST /v1/events', { body: { event_name: 'llm_call', external_customer_id: 'acme', timestamp: '2026-09-10T00:00:00Z', properties: { tokens: 5 } }, expect: 202 })
  await api('POST /v1/events/raw/bulk', {
    body: { events: [{ event_id: 'e1', event_name: 'llm_call', external_customer_id: 'acme', timestamp: '2026-09-10T01:00:00Z', properties: { tokens: 1200 } }] },
    expect: 202,
  })
  await eventually(async () => {
    const u = await api('POST /v1/meters/{id}/usage', { params: { id: id(meter) }, body: { external_customer_id: 'acme', ...period, window_size: 'DAY' } })
    return JSON.stringify(u.body).includes('1205') ? true : undefined
  }, 'the events counted')
  await api('GET /v1/events')
  await api('POST /v1/events/query', { body: { external_customer_id: 'acme' } })
  await api('POST /v1/events/bulk', {
    body: { events: [{ event_id: 'e2', event_name: 'llm_call', external_customer_id: 'acme', timestamp: '2026-09-10T02:00:00Z', properties: { tokens: 1 } }] },
    expect: 202,
  })

  // --- customers
  const customer = await api('POST /v1/customers', { body: { external_id: 'acme', name: 'Acme', email: 'billing@acme.test' }, expect: 201 })
  await api('GET /v1/customers')
  await api('POST /v1/customers/search', { body: {} })
  await api('GET /v1/customers/{id}', { params: { id: id(customer) } })
  await api('PUT /v1/customers/{id}', { params: { id: id(customer) }, body: { name: 'Acme Inc' } })
  await api('GET /v1/customers/external/{external_id}', { params: { external_id: 'acme' } })
  await api('PUT /v1/customers', { query: 'external_customer_id=acme', body: { email: 'ap@acme.test' } })

  // --- catalog: pricing units, features, groups, plans, prices, add-ons, entitlements, credit grants
  const unit = await api('POST /v1/pricing-units', { body: { name: 'Credits', code: 'crd', base_currency: 'usd', conversion_rate: '0.01' }, expect: 201 })
  await api('GET /v1/pricing-units')
  await api('POST /v1/pricing-units/search', { body: {} })
  await api('GET /v1/pricing-units/{id}', { params: { id: id(unit) } })
  await api('PUT /v1/pricing-units/{id}', { params: { id: id(unit) }, body: { name: 'Credit points' } })
  const sdkUnit = await api('POST /v1/prices/units', { body: { name: 'Tokens', code: 'tok', symbol: 'T', base_currency: 'usd', conversion_rate: '0.5' }, expect: 201 })
  await api('GET /v1/prices/units')
  await api('POST /v1/prices/units/search', { body: {} })
  await api('GET /v1/prices/units/{id}', { params: { id: id(sdkUnit) } })
  await api('GET /v1/prices/units/code/{code}', { params: { code: 'tok' } })
  await api('PUT /v1/prices/units/{id}', { params: { id: id(sdkUnit) }, body: { name: 'Token points' } })
  await api('DELETE /v1/prices/units/{id}', { params: { id: id(sdkUnit) }, expect: 200 })
  const feature = await api('POST /v1/features', { body: { name: 'Tokens', type: 'metered', meter_id: id(meter), lookup_key: 'tokens' }, expect: 201 })
  await api('GET /v1/features')
  await api('POST /v1/features/search', { body: { lookup_key: 'tokens' } })
  await api('GET /v1/features/{id}', { params: { id: id(feature) } })
  await api('PUT /v1/features/{id}', { params: { id: id(feature) }, body: { name: 'LLM tokens' } })
  const group = await api('POST /v1/groups', { body: { name: 'Usage', entity_type: 'price' }, expect: 201 })
  await api('GET /v1/groups')
  await api('POST /v1/groups/search', { body: {} })
  await api('GET /v1/groups/{id}', { params: { id: id(group) } })
  await api('PUT /v1/groups/{id}', { params: { id: id(group) }, body: { name: 'Usage prices' } })
  const fee = { type: 'FIXED', billing_model: 'FLAT_FEE', amount: '20.00', currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }
  const perToken = {
    type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.01', currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: id(meter),
  }
  const plan = await api('POST /v1/plans', { body: { name: 'Pro', lookup_key: 'pro', prices: [fee, perToken] }, expect: 201 })
  await api('GET /v1/plans')
  await api('POST /v1/plans/search', { body: {} })
  await api('GET /v1/plans/{id}', { params: { id: id(plan) } })
  await api('PUT /v1/plans/{id}', { params: { id: id(plan) }, body: { name: 'Pro plan' } })
  const price = await api('POST /v1/prices', {
    body: { ...fee, amount: '5.00', entity_type: 'PLAN', entity_id: id(plan), lookup_key: 'support', billing_cadence: 'RECURRING', price_unit_type: 'FIAT' }, expect: 201,
  })
  await api('GET /v1/prices')
  await api('POST /v1/prices/search', { body: { plan_ids: [id(plan)] } })
  await api('GET /v1/prices/lookup/{lookup_key}', { params: { lookup_key: 'support' } })
  const spare = await api('POST /v1/plans', { body: { name: 'Spare' }, expect: 201 })
  await api('POST /v1/prices/bulk', { body: { items: [{ ...fee, entity_type: 'PLAN', entity_id: id(spare) }] }, expect: 201 })
  await api('GET /v1/prices/{id}', { params: { id: id(price) } })
  await api('PUT /v1/prices/{id}', { params: { id: id(price) }, body: { description: 'support' } })
  const addon = await api('POST /v1/addons', { body: { name: 'Extra', lookup_key: 'extra' }, expect: 201 })
  await api('GET /v1/addons')
  await api('POST /v1/addons/search', { body: {} })
  await api('GET /v1/addons/{id}', { params: { id: id(addon) } })
  await api('PUT /v1/addons/{id}', { params: { id: id(addon) }, body: { name: 'Extras' } })
  await api('GET /v1/addons/lookup/{lookup_key}', { params: { lookup_key: 'extra' } })
  const entitlement = await api('POST /v1/entitlements', {
    body: { entity_type: 'PLAN', entity_id: id(plan), feature_id: id(feature), usage_limit: 1000000, usage_reset_period: 'MONTHLY' }, expect: 201,
  })
  await api('GET /v1/entitlements')
  await api('GET /v1/entitlements/{id}', { params: { id: id(entitlement) } })
  await api('PUT /v1/entitlements/{id}', { params: { id: id(entitlement) }, body: { usage_limit: 2000000 } })
  await api('POST /v1/entitlements/search', { body: { feature_ids: [id(feature)] } })
  await api('POST /v1/entitlements/bulk', { body: { items: [{ entity_type: 'ADDON', entity_id: id(addon), feature_id: id(feature), feature_type: 'metered' }] }, expect: 201 })
  await api('GET /v1/addons/{id}/entitlements', { params: { id: id(addon) } })
  await api('GET /v1/plans/{id}/entitlements', { params: { id: id(plan) } })
  const grant = await api('POST /v1/creditgrants', { body: { name: 'Welcome', credits: '10', period: 'MONTHLY', plan_id: id(plan) }, expect: 201 })
  await api('GET /v1/creditgrants')
  await api('POST /v1/creditgrants/search', { body: {} })
  await api('GET /v1/creditgrants/{id}', { params: { id: id(grant) } })
  await api('PUT /v1/creditgrants/{id}', { params: { id: id(grant) }, body: { name: 'Welcome credits' } })
  await api('GET /v1/plans/{id}/creditgrants', { params: { id: id(plan) } })
  await api('POST /v1/plans/{id}/clone', { params: { id: id(plan) }, body: { name: 'Pro copy', lookup_key: 'pro-copy' }, expect: 201 })

  // --- taxes and coupons
  const rate = await api('POST /v1/taxes/rates', { body: { name: 'VAT', code: 'vat', percentage_value: '20' }, expect: 201 })
  await api('GET /v1/taxes/rates')
  await api('POST /v1/taxes/rates/search', { body: {} })
  await api('GET /v1/taxes/rates/{id}', { params: { id: id(rate) } })
  await api('PUT /v1/taxes/rates/{id}', { params: { id: id(rate) }, body: { name: 'VAT (FR)' } })
  const taxAssoc = await api('POST /v1/taxes/associations', { body: { tax_rate_id: id(rate), entity_type: 'customer', entity_id: id(customer) }, expect: 200 })
  await api('GET /v1/taxes/associations')
  await api('POST /v1/taxes/associations/search', { body: {} })
  await api('GET /v1/taxes/associations/{id}', { params: { id: id(taxAssoc) } })
  await api('PUT /v1/taxes/associations/{id}', { params: { id: id(taxAssoc) }, body: { priority: 1 } })
  const coupon = await api('POST /v1/coupons', { body: { name: 'Launch', type: 'percentage', percentage_off: '10', duration: 'forever' }, expect: 201 })
  await api('GET /v1/coupons')
  await api('POST /v1/coupons/search', { body: {} })
  await api('GET /v1/coupons/{id}', { params: { id: id(coupon) } })
  await api('PUT /v1/coupons/{id}', { params: { id: id(coupon) }, body: { name: 'Launch 10' } })

  // --- subscriptions
  for (const external_id of ['kid1', 'kid2', 'draft-co']) await api('POST /v1/customers', { body: { external_id }, expect: 201 })
  // a PARENT subscription (one inherited child), so the inherited routes have something to show
  const sub = await api('POST /v1/subscriptions', {
    body: { customer_id: id(customer), plan_id: id(plan), currency: 'USD', start_date: '2026-08-01T00:00:00Z', inheritance: { child_external_customer_ids: ['kid1'] } },
    expect: 201,
  })
  const subId = id(sub)
  await api('GET /v1/subscriptions')
  await api('GET /v1/subscriptions/{id}', { params: { id: subId } })
  await api('GET /v2/subscriptions/{id}', { params: { id: subId } })
  await api('GET /v1/subscriptions/{id}/v2', { params: { id: subId } })
  await api('POST /v1/plans/{id}/sync/subscriptions', { params: { id: id(plan) } })
  await api('POST /v1/subscriptions/search', { body: { customer_id: id(customer) } })
  await api('PUT /v1/subscriptions/{id}', { params: { id: subId }, body: { metadata: { team: 'a' } } })
  const lines = await api('POST /v1/subscriptions/lineitems/search', { body: { subscription_ids: [subId] } })
  const usagePrice = plan.body.prices.find((x: { type: string }) => x.type === 'USAGE').id
  const lineItemId = String(lines.body.items.find((l: { price_id: string }) => l.price_id === usagePrice)?.id)
  await api('PUT /v1/subscriptions/{id}/line_items/{line_item_id}/commitment', {
    params: { id: subId, line_item_id: lineItemId }, body: { commitment_amount: '10.00' },
  })
  await api('GET /v1/subscriptions/{id}/grants/upcoming', { params: { id: subId } })
  await api('GET /v1/customers/{id}/grants/upcoming', { params: { id: id(customer) } })
  await api('GET /v1/customers/{id}/entitlements', { params: { id: id(customer) } })
  await api('GET /v1/subscriptions/{id}/entitlements', { params: { id: subId } })
  await api('GET /v1/subscriptions/{id}/inherited', { params: { id: subId } })
  await api('POST /v1/subscriptions/{id}/inherited', { params: { id: subId }, body: { add_external_customer_ids: ['kid2'] } })
  const phase = await api('POST /v1/subscriptions/{id}/phases', {
    params: { id: subId }, body: { start_date: '2027-01-01T00:00:00Z', line_items: [{ price_id: id(price), quantity: '1' }] }, expect: 201,
  })
  await api('GET /v1/subscriptions/{id}/phases', { params: { id: subId } })
  const draft = await api('POST /v1/subscriptions', {
    body: { external_customer_id: 'draft-co', plan_id: id(plan), currency: 'USD', draft: true }, expect: 201,
  })
  await api('POST /v1/invoices/internal/preview', { body: { subscription_id: id(draft) } })
  await api('POST /v1/subscriptions/{id}/activate', { params: { id: id(draft) }, body: {} })
  await api('POST /v1/invoices/preview', { body: { subscription_id: id(draft) } })
  const firstInvoice = await api('POST /v1/invoices/search', { body: { subscription_id: id(draft), invoice_status: ['DRAFT'] } })
  await api('POST /v1/invoices/{id}/recalculate', { params: { id: firstInvoice.body.items[0].id }, query: 'finalize=false' })
  // a quantity change on the activated subscription (its period is the current one)
  const draftLines = await api('POST /v1/subscriptions/lineitems/search', { body: { subscription_ids: [id(draft)] } })
  const seat = draftLines.body.items.find((l: { price_id: string }) => l.price_id !== usagePrice).id as string
  const change = { change_type: 'quantity_change', line_item_id: seat, quantity: '2' }
  await api('POST /v1/subscriptions/{id}/modify/preview', { params: { id: id(draft) }, body: change })
  await api('POST /v1/subscriptions/{id}/modify', { params: { id: id(draft) }, body: change })
  const extra = await api('POST /v1/prices', { body: { ...fee, amount: '3.00', entity_type: 'PLAN', entity_id: id(plan) }, expect: 201 })
  const added = await api('POST /v1/subscriptions/{id}/lineitems', { params: { id: id(draft) }, body: { price_id: id(extra), quantity: 2 }, expect: 201 })
  await api('PUT /v1/subscriptions/lineitems/{id}', { params: { id: id(added) }, body: { metadata: { seat: 'extra' } } })
  await api('DELETE /v1/subscriptions/lineitems/{id}', { params: { id: id(added) }, body: {} })
  const planChange = { target_plan_id: id(spare), proration_behavior: 'create_prorations', billing_cadence: 'RECURRING', billing_cycle: 'anniversary', billing_period: 'MONTHLY' }
  await api('POST /v1/subscriptions/{id}/change/preview', { params: { id: id(draft) }, body: planChange })
  await api('POST /v1/subscriptions/{id}/change/execute', { params: { id: id(draft) }, body: planChange })
  const support = await api('POST /v1/addons', { body: { name: 'Support', lookup_key: 'support-addon', prices: [{ ...fee, amount: '4.00' }] }, expect: 201 })
  const attached = await api('POST /v1/subscriptions/addon', { body: { subscription_id: id(draft), addon_id: id(support) } })
  await api('GET /v1/subscriptions/{id}/addons/associations', { params: { id: id(draft) } })
  const couponAssoc = await api('POST /v1/coupon_associations', { body: { coupon_id: id(coupon), subscription_id: subId }, expect: 201 })
  await api('GET /v1/coupon_associations', { query: `subscription_id=${subId}` })

  // --- live access and analytics
  await api('POST /v1/entitlements/check', { body: { customer_id: id(customer), feature_id: id(feature) } })
  await api('POST /v1/entitlements/check/batch', { body: { customer_id: id(customer), features: [{ feature_id: id(feature) }] } })
  await api('GET /v1/customers/{id}/live-balance', { params: { id: id(customer) } })
  await api('GET /v1/customers/{id}/usage-summary', { params: { id: id(customer) } })
  await api('POST /v1/analytics/meter-usage', { body: { ...period, meter_ids: [id(meter)] } })
  await api('POST /v1/analytics/usage/export', { body: period })
  await api('POST /v1/dashboard/revenue-dashboard', { body: { start_time: '2026-08-01T00:00:00Z', end_time: '2026-12-01T00:00:00Z' } })
  await api('POST /v1/ai/pricing/parse', { body: { description: '$0.002 per API call' } })

  // --- invoices, payments, refunds
  const oneOff = await api('POST /v1/invoices', {
    body: { customer_id: id(customer), currency: 'USD', invoice_type: 'ONE_OFF', line_items: [{ display_name: 'Setup', amount: '50.00', quantity: '1' }] }, expect: 201,
  })
  const invId = id(oneOff)
  await api('GET /v1/invoices')
  await api('POST /v1/invoices/search', { body: {} })
  await api('GET /v1/invoices/{id}', { params: { id: invId } })
  await api('PUT /v1/invoices/{id}', { params: { id: invId }, body: { metadata: { po: '42' } } })
  const compute = await api('POST /v1/invoices/{id}/compute', { params: { id: invId }, body: {}, expect: 202 })
  await api('GET /v1/invoices/compute-jobs/{workflow_id}', { params: { workflow_id: compute.body.workflow_id } })
  await api('POST /v1/invoices/{id}/finalize', { params: { id: invId }, body: {} })
  await api('GET /v1/invoices/{id}/pdf', { params: { id: invId } })
  await api('GET /v1/invoices/{id}/csv', { params: { id: invId } })
  await api('POST /v1/invoices/search/csv', { body: {} })
  await api('POST /v1/invoices/{id}/payment_failures', { params: { id: invId }, body: { reason: 'card_declined' } })
  await api('POST /v1/invoices/{id}/payments', { params: { id: invId }, body: { amount: '30.00' } })
  await api('GET /v1/invoices/{id}/payments', { params: { id: invId } })
  const setupLine = oneOff.body.line_items[0].id as string
  const note = await api('POST /v1/creditnotes', { body: { invoice_id: invId, reason: 'BILLING_ERROR', line_items: [{ invoice_line_item_id: setupLine, amount: '5.00' }] }, expect: 201 })
  await api('GET /v1/creditnotes/{id}', { params: { id: id(note) } })
  await api('POST /v1/creditnotes/{id}/finalize', { params: { id: id(note) } })
  const mistaken = await api('POST /v1/creditnotes', { body: { invoice_id: invId, reason: 'DUPLICATE', line_items: [{ invoice_line_item_id: setupLine, amount: '1.00' }] }, expect: 201 })
  await api('POST /v1/creditnotes/{id}/void', { params: { id: id(mistaken) } })
  const pay = await api('POST /v1/payments', {
    body: { amount: '1.00', currency: 'USD', destination_id: invId, destination_type: 'INVOICE', payment_method_type: 'OFFLINE' }, expect: 201,
  })
  await api('GET /v1/payments', { query: `destination_id=${invId}` })
  await api('GET /v1/payments/{id}', { params: { id: id(pay) } })
  await api('PUT /v1/payments/{id}', { params: { id: id(pay) }, body: { metadata: { ref: 'wire' } } })
  await api('POST /v1/payments/{id}/process', { params: { id: id(pay) }, expect: 400 })
  await api('DELETE /v1/payments/{id}', { params: { id: id(pay) }, expect: 400 })
  await api('GET /v1/customers/{id}/invoices/summary', { params: { id: id(customer) } })
  await api('GET /v1/customers/usage', { query: `customer_id=${id(customer)}` })
  const second = await api('POST /v1/invoices', {
    body: { customer_id: id(customer), currency: 'USD', invoice_type: 'ONE_OFF', line_items: [{ display_name: 'Seats', amount: '10.00', quantity: '1' }] }, expect: 201,
  })
  await api('POST /v1/invoices/{id}/finalize', { params: { id: id(second) }, body: {} })
  await api('POST /v1/invoices/{id}/void', { params: { id: id(second) }, body: {} })

  // --- wallets
  const wallet = await api('POST /v1/wallets', { body: { customer_id: id(customer), currency: 'USD' }, expect: 200 })
  await api('GET /v1/wallets')
  await api('GET /v1/wallets/{id}', { params: { id: id(wallet) } })
  await api('POST /v1/wallets/{id}/top-up', { params: { id: id(wallet) }, body: { credits: '100', transaction_reason: 'PURCHASED', idempotency_key: 'top-1' } })
  await api('POST /v1/wallets/{id}/debit', { params: { id: id(wallet) }, body: { credits: '10', idempotency_key: 'debit-1' } })
  await api('GET /v1/wallets/{id}/transactions', { params: { id: id(wallet) } })
  await api('PUT /v1/wallets/{id}', { params: { id: id(wallet) }, body: { description: 'Prepaid' } })
  await api('GET /v1/wallets/{id}/balance/real-time', { params: { id: id(wallet) } })
  await api('POST /v1/wallets/search', { body: { wallet_ids: [id(wallet)] } })
  await api('POST /v1/wallets/transactions/search', { body: { wallet_id: id(wallet) } })
  await api('PUT /v1/wallets/{id}/settings', { params: { id: id(wallet) }, body: { balance_alert: null } })
  await api('POST /v1/wallets/{id}/modify', { params: { id: id(wallet) }, body: { modification_type: 'prepaid_to_postpaid' } })
  await api('GET /v1/customers/{id}/wallets', { params: { id: id(customer) } })
  await api('GET /v1/customers/wallets', { query: 'lookup_key=acme' })
  await api('POST /v1/wallets/{id}/terminate', { params: { id: id(wallet) } })

  // --- outbound webhooks
  const endpoint = await api('POST /v1/webhooks/endpoints', { body: { url: `${stripe.url}/hooks` }, expect: 201 })
  await api('GET /v1/webhooks/endpoints')
  await api('GET /v1/webhooks/endpoints/{id}', { params: { id: id(endpoint) } })
  await api('POST /v1/webhooks/endpoints/{id}/disable', { params: { id: id(endpoint) } })
  await api('POST /v1/webhooks/endpoints/{id}/enable', { params: { id: id(endpoint) } })

  // --- integrations (Stripe, against the stand-in) and the inbound provider webhook
  const connection = await api('POST /v1/integrations/connections', {
    body: { provider: 'stripe', name: 'Stripe', credentials: { api_key: 'sk_test_contract_000000000', webhook_secret: WEBHOOK_SECRET } }, expect: 201,
  })
  await api('GET /v1/integrations/connections')
  await api('GET /v1/integrations/connections/{id}', { params: { id: id(connection) } })
  await api('POST /v1/integrations/sync', { body: { entity_type: 'customer', entity_id: id(customer), provider: 'stripe', method: 'push' } })
  const linked = await api('POST /v1/customers', { body: { external_id: 'linked' }, expect: 201 })
  await api('POST /v1/integrations/link', { body: { entity_type: 'customer', entity_id: id(linked), provider: 'stripe', provider_entity_id: 'cus_contract1' } })
  // customer.created of `linked`, relayed to the endpoint (the stand-in answers it 404: the delivery fails)
  const deliveries = await eventually(async () => {
    const r = await api('GET /v1/webhooks/deliveries')
    return r.body.items.length > 0 ? r : undefined
  }, 'a webhook delivery')
  const delivery = deliveries.body.items[0].id as string
  await api('GET /v1/webhooks/deliveries/{id}', { params: { id: delivery } })
  await api('POST /v1/webhooks/{id}/retry', { params: { id: delivery }, body: {} })
  await api('POST /v1/invoices/{id}/payment_link', { params: { id: invId }, body: { success_url: 'https://example.com/paid' } })
  // the rest (the total includes the customer's 20 % VAT): a refund needs a paid invoice
  await api('PUT /v1/invoices/{id}/payment', { params: { id: invId }, body: { payment_status: 'SUCCEEDED' } })
  await api('POST /v1/invoices/{id}/refunds', { params: { id: invId }, body: { amount: '10.00' }, expect: 201 })
  const event = JSON.stringify({ id: 'evt_contract_1', object: 'event', type: 'customer.updated', created: Math.floor(NOW.getTime() / 1000), data: { object: { id: 'cus_contract1' } } })
  const signature = new Stripe('sk_test_signer').webhooks.generateTestHeaderString({ payload: event, secret: WEBHOOK_SECRET, timestamp: Math.floor(NOW.getTime() / 1000) })
  await c.call('POST /webhooks/{provider}/{tenant_id}/{env_id}', {
    params: { provider: 'stripe', tenant_id: t.tenantId, env_id: t.environments.production },
    rawBody: event, headers: { 'content-type': 'application/json', 'stripe-signature': signature },
  })

  // --- environment clone
  const clone = await api('POST /v1/environments/clone', { body: { source_environment_id: t.environments.production, target_environment_id: id(env) }, expect: 202 })
  await api('GET /v1/environments/clone-jobs/{job_id}', { params: { job_id: String(clone.body.job_id ?? clone.body.id) } })

  // --- signup (no API key)
  await c.call('POST /v1/signup', { body: { email: 'founder@contract.test', tenant_name: 'Signed up' }, expect: 201 })

  // --- admin API
  await admin('GET /v1/admin/aggregators')
  await admin('PUT /v1/admin/aggregators', { body: { consumers: 1 } })
  await admin('GET /v1/admin/jobs')
  const run = await admin('POST /v1/admin/jobs/{name}/runs', { params: { name: 'subscription-billing' }, body: { tenant_id: t.tenantId }, expect: 202 })
  await admin('GET /v1/admin/queues')
  await admin('GET /v1/admin/queues/{queue}', { params: { queue: 'scheduler' } })
  await admin('GET /v1/admin/queues/{queue}/jobs/{id}', { params: { queue: 'scheduler', id: id(run) } })
  await admin('POST /v1/admin/queues/{queue}/jobs/{id}/retry', { params: { queue: 'scheduler', id: id(run) }, body: {}, expect: 400 })
  await admin('POST /v1/admin/queues/{queue}/retry-failed', { params: { queue: 'scheduler' }, body: {} })
  const runs = await eventually(async () => {
    const r = await admin('GET /v1/admin/billing-runs')
    return r.body.items.length > 0 ? r : undefined
  }, 'a billing run')
  await admin('GET /v1/admin/billing-runs/{id}', { params: { id: runs.body.items[0].id } })
  await admin('POST /v1/admin/tenants', { body: { name: 'Admin made' }, expect: 201 })

  // The August period the billing run invoiced has a usage line: its explain trail.
  const usageLine = await eventually(async () => {
    const list = await p.client(t.apiKey).get(`/v1/invoices?subscription_id=${subId}`)
    for (const inv of list.body.items ?? []) {
      const detail = await p.client(t.apiKey).get(`/v1/invoices/${inv.id}`)
      const line = detail.body.line_items?.find((l: { price_type: string }) => l.price_type === 'USAGE')
      if (line) return { invoice: inv.id as string, line: line.id as string }
    }
    return undefined
  }, 'an invoice with a usage line')
  await api('GET /v1/invoices/{id}/lines/{line_id}/explain', { params: { id: usageLine.invoice, line_id: usageLine.line } })

  // one counted event by its id
  const counted = await eventually(async () => {
    const r = await api('GET /v1/events')
    return r.body.items.length > 0 ? r : undefined
  }, 'a counted event')
  await api('GET /v1/events/{id}', { params: { id: counted.body.items[0].event_id } })

  // --- deletions, last
  await api('DELETE /v1/subscriptions/{id}/phases/{phase_id}', { params: { id: subId, phase_id: id(phase) }, expect: 204 })
  await api('DELETE /v1/coupon_associations/{id}', { params: { id: id(couponAssoc) }, expect: 204 })
  await api('POST /v1/subscriptions/{id}/cancel', { params: { id: subId }, body: { cancellation_type: 'immediate' } })
  await api('DELETE /v1/integrations/connections/{id}', { params: { id: id(connection) }, expect: 204 })
  const secret = await api('POST /v1/secrets/integrations/create/{provider}', {
    params: { provider: 'stripe' }, body: { provider: 'stripe', name: 'Stripe', credentials: { api_key: 'sk_test_contract_000000001', webhook_secret: WEBHOOK_SECRET } }, expect: 201,
  })
  await api('GET /v1/secrets/integrations/by-provider/{provider}', { params: { provider: 'stripe' } })
  await api('GET /v1/secrets/integrations/linked')
  await api('DELETE /v1/secrets/integrations/{id}', { params: { id: id(secret) }, expect: 204 })
  const mapping = await api('POST /v1/entity-integration-mappings', {
    body: { entity_type: 'customer', entity_id: id(linked), provider_type: 'stripe', provider_entity_id: 'cus_contract2' }, expect: 201,
  })
  await api('GET /v1/entity-integration-mappings/{id}', { params: { id: id(mapping) } })
  await api('DELETE /v1/entity-integration-mappings/{id}', { params: { id: id(mapping) }, expect: 204 })
  // an attachment ends after its start
  clock.advance(3_600_000)
  await api('DELETE /v1/subscriptions/addon', { body: { addon_association_id: id(attached) } })
  await api('DELETE /v1/webhooks/endpoints/{id}', { params: { id: id(endpoint) }, expect: 204 })
  await api('DELETE /v1/taxes/associations/{id}', { params: { id: id(taxAssoc) }, expect: 200 })
  await api('DELETE /v1/taxes/rates/{id}', { params: { id: id(rate) }, expect: 204 })
  await api('DELETE /v1/coupons/{id}', { params: { id: id(coupon) }, expect: 200 })
  await api('DELETE /v1/creditgrants/{id}', { params: { id: id(grant) }, expect: 200 })
  await api('DELETE /v1/entitlements/{id}', { params: { id: id(entitlement) }, expect: 200 })
  await api('DELETE /v1/addons/{id}', { params: { id: id(addon) }, expect: 200 })
  await api('DELETE /v1/prices/{id}', { params: { id: id(price) }, expect: 200 })
  await api('DELETE /v1/plans/{id}', { params: { id: id(plan) }, expect: 200 })
  await api('DELETE /v1/groups/{id}', { params: { id: id(group) }, expect: 204 })
  await api('DELETE /v1/features/{id}', { params: { id: id(feature) }, expect: 200 })
  await api('DELETE /v1/pricing-units/{id}', { params: { id: id(unit) }, expect: 200 })
  await api('DELETE /v1/customers/{id}', { params: { id: id(customer) }, expect: 204 })
  await api('DELETE /v1/meters/{id}', { params: { id: id(meter) }, expect: 204 })
  await api('DELETE /v1/secrets/api/keys/{id}', { params: { id: id(key) }, expect: 204 })
  await api('DELETE /v1/users/{id}', { params: { id: id(user) }, expect: 204 })

  const operations = validator.operations()
  const unanswered = operations.filter((op) => !c.answered.has(op))
  assert.deepEqual(unanswered, [], 'operations this test sent no request')
  const noSuccess = operations.filter((op) => ![...(c.answered.get(op) ?? [])].some((s) => s < 300)).sort()
  assert.deepEqual(noSuccess, Object.keys(ERROR_ONLY).sort(), 'operations reached only with an error answer (ERROR_ONLY says why)')
})

test('an error answer is the declared ErrorResponse, and an undeclared status fails the check', async () => {
  const t = await p.newTenant('Errors')
  const api = c.as({ 'x-api-key': t.apiKey })
  const missing = await api('GET /v1/meters/{id}', { params: { id: 'meter_missing' }, expect: 404 })
  assert.equal(missing.body.code, 'not_found')
  await c.call('GET /v1/meters', { expect: 401 })
  await api('POST /v1/meters', { body: { name: '' }, expect: 400 })
  // The checker itself: an undeclared status has no response, and a property the schema does not list fails.
  assert.equal(validator.response('GET', '/v1/meters/{id}', 418), undefined)
  const body = { ...missing.body, hint: 'a key exists' }
  assert.match(validator.validate('GET', '/v1/meters/{id}', 404, body).join(), /additional properties/)
})

test('every validator and response serializer of every route compiles (they are compiled on first use, not at the start)', () => {
  // Hundreds of routes, each with a validator per request part and a serializer per status.
  assert.ok(compileAllDeferred() > 500)
  assert.equal(compileAllDeferred(), 0, 'a second pass has nothing left')
})
