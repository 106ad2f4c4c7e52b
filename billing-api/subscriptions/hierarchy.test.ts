// Subscription hierarchies over HTTP (spec: Subscription types, Errors 7 and 8): creating a
// parent with inherited children, every inheritance refusal (400 validation_error, nothing
// written), adding and removing inherited subscriptions, the list filter by type, and the
// grouped invoicing modifications. Billing of hierarchies: hierarchy-billing.test.ts.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { applyDueCreditGrants } from '../credit-grants/apply-due.js'
import { activateIncompleteSubscription } from './activate-incomplete.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

const fee = { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '6', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', display_name: 'Fee' }

async function setup(...externalIds: string[]) {
  const t = await p.newTenant()
  const plan = await created(t.api.post('/v1/plans', { name: 'Pro', prices: [fee] }))
  const customers: Record<string, any> = {}
  for (const e of externalIds) customers[e] = await created(t.api.post('/v1/customers', { external_id: e }))
  const subscribe = (body: Record<string, unknown>) => t.api.post('/v1/subscriptions', { plan_id: plan.id, currency: 'EUR', ...body })
  return { t, plan, customers, subscribe }
}

/** Rows a rejected request must leave unchanged. */
const snapshot = async (tenantId: string) => ({
  subscriptions: await countRows(p, 'subscriptions', tenantId),
  events: await countRows(p, 'system_events_outbox', tenantId),
  invoices: await countRows(p, 'invoices', tenantId),
})

async function refused(tenantId: string, request: Promise<{ status: number; body: any }>, message: RegExp) {
  const before = await snapshot(tenantId)
  assertError(await request, 400, 'validation_error', message)
  assert.deepEqual(await snapshot(tenantId), before, 'nothing written')
}

const inherited = async (api: ApiClient, parentId: string) => {
  const res = await api.get(`/v1/subscriptions/${parentId}/inherited`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.inherited_subscriptions as Record<string, string>[]
}

test('a parent created with inheritance gets one INHERITED child per customer, mirroring its plan and period, without line items', async () => {
  const { t, plan, customers, subscribe } = await setup('acme', 'kid1', 'kid2')
  const parent = await created(subscribe({
    external_customer_id: 'acme', start_date: '2026-10-01T00:00:00Z',
    inheritance: { child_external_customer_ids: ['kid1'], child_customer_ids: [customers.kid2.id] },
  }))
  assert.equal(parent.subscription_type, 'PARENT')
  assert.equal(parent.parent_subscription_id, null)
  const children = await inherited(t.api, parent.id)
  assert.deepEqual(children.map((c) => c.customer_id).sort(), [customers.kid1.id, customers.kid2.id].sort())
  for (const c of children) {
    assert.deepEqual(
      [c.subscription_type, c.parent_subscription_id, c.plan_id, c.currency, c.subscription_status, c.current_period_start, c.current_period_end, c.auto_invoice_threshold],
      ['INHERITED', parent.id, plan.id, 'EUR', 'ACTIVE', '2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z', null],
    )
    assert.deepEqual((await t.api.get(`/v1/subscriptions/${c.id}`)).body.line_items, [])
  }
  // one subscription.created per subscription: the parent and each child
  const [row] = await p.ctx.orm.em.fork().getConnection().execute(
    `SELECT count(*)::int AS n FROM system_events_outbox WHERE tenant_id = ? AND event_name = 'subscription.created'`, [t.tenantId])
  assert.equal(row.n, 3)
})

test('Errors 8: inheriting a customer with a standalone subscription is refused, nothing written', async () => {
  const { t, subscribe } = await setup('acme', 'solo')
  await created(subscribe({ external_customer_id: 'solo' }))
  await refused(t.tenantId, subscribe({ external_customer_id: 'acme', inheritance: { child_external_customer_ids: ['solo'] } }), /solo|own subscription/)
  const parent = await created(subscribe({ external_customer_id: 'acme', inheritance: {} }))
  await refused(t.tenantId, t.api.post(`/v1/subscriptions/${parent.id}/inherited`, { add_external_customer_ids: ['solo'] }), /own subscription/)
  await refused(t.tenantId, subscribe({ external_customer_id: 'solo', parent_subscription_id: parent.id }), /own subscription/)
})

test('Errors 8: a child inherited under a different parent is refused; re-inheriting under the same parent is idempotent', async () => {
  const { t, customers, subscribe } = await setup('acme', 'beta', 'kid')
  const first = await created(subscribe({ external_customer_id: 'acme', inheritance: { child_external_customer_ids: ['kid'] } }))
  const [child] = await inherited(t.api, first.id)
  await refused(t.tenantId, subscribe({ external_customer_id: 'beta', inheritance: { child_external_customer_ids: ['kid'] } }), /different parent/)
  const second = await created(subscribe({ external_customer_id: 'beta', inheritance: {} }))
  await refused(t.tenantId, t.api.post(`/v1/subscriptions/${second.id}/inherited`, { add_customer_ids: [customers.kid.id] }), /different parent/)
  await refused(t.tenantId, subscribe({ customer_id: customers.kid.id, parent_subscription_id: second.id }), /different parent/)

  const before = await snapshot(t.tenantId)
  const again = await t.api.post(`/v1/subscriptions/${first.id}/inherited`, { add_external_customer_ids: ['kid'] })
  assert.equal(again.status, 200, JSON.stringify(again.body))
  assert.deepEqual(again.body.inherited_subscriptions.map((s: any) => s.id), [child.id])
  const viaCreate = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'kid', parent_subscription_id: first.id }))
  assert.equal(viaCreate.id, child.id)
  assert.equal((await snapshot(t.tenantId)).subscriptions, before.subscriptions, 'no second child')
})

test('Errors 8: a customer with a PARENT subscription cannot inherit one', async () => {
  const { t, subscribe } = await setup('acme', 'beta')
  const parent = await created(subscribe({ external_customer_id: 'acme', inheritance: {} }))
  await created(subscribe({ external_customer_id: 'beta', inheritance: {} }))
  await refused(t.tenantId, t.api.post(`/v1/subscriptions/${parent.id}/inherited`, { add_external_customer_ids: ['beta'] }), /PARENT subscription cannot inherit/)
  await refused(t.tenantId, subscribe({ external_customer_id: 'beta', parent_subscription_id: parent.id }), /PARENT subscription cannot inherit/)
  // nor can the parent's own customer inherit it
  await refused(t.tenantId, t.api.post(`/v1/subscriptions/${parent.id}/inherited`, { add_external_customer_ids: ['acme'] }), /owns parent subscription/)
})

test('Errors 8: no standalone or parent subscription for a customer that already inherits one', async () => {
  const { t, customers, subscribe } = await setup('acme', 'kid', 'payer')
  await created(subscribe({ external_customer_id: 'acme', inheritance: { child_external_customer_ids: ['kid'] } }))
  await refused(t.tenantId, subscribe({ external_customer_id: 'kid' }), /already inherits/)
  await refused(t.tenantId, subscribe({ external_customer_id: 'kid', inheritance: {} }), /already inherits/)
  await refused(t.tenantId, subscribe({ external_customer_id: 'kid', invoicing_customer_id: customers.payer.id }), /already inherits/)
})

test('Errors 7: auto_invoice_threshold is refused on INHERITED and DELEGATED_INVOICING subscriptions', async () => {
  const { t, customers, subscribe } = await setup('acme', 'kid', 'user', 'payer')
  const parent = await created(subscribe({ external_customer_id: 'acme', inheritance: {} }))
  await refused(t.tenantId, subscribe({ external_customer_id: 'kid', parent_subscription_id: parent.id, auto_invoice_threshold: '10' }), /INHERITED/)
  await refused(t.tenantId, subscribe({ external_customer_id: 'user', invoicing_customer_id: customers.payer.id, auto_invoice_threshold: '10' }), /DELEGATED_INVOICING/)
  // and on update
  const child = await created(subscribe({ external_customer_id: 'kid', parent_subscription_id: parent.id }))
  const delegated = await created(subscribe({ external_customer_id: 'user', invoicing_customer_id: customers.payer.id }))
  await refused(t.tenantId, t.api.put(`/v1/subscriptions/${child.id}`, { auto_invoice_threshold: '10' }), /INHERITED/)
  await refused(t.tenantId, t.api.put(`/v1/subscriptions/${delegated.id}`, { auto_invoice_threshold: '10' }), /DELEGATED_INVOICING/)
})

test('hierarchy options exclude each other; unknown customers and parents are refused', async () => {
  const { t, customers, subscribe } = await setup('acme', 'kid', 'payer')
  const parent = await created(subscribe({ external_customer_id: 'acme', inheritance: {} }))
  const solo = await created(subscribe({ external_customer_id: 'payer' }))
  await refused(t.tenantId, subscribe({ external_customer_id: 'kid', inheritance: {}, invoicing_customer_id: customers.payer.id }), /exclude each other/)
  await refused(t.tenantId, subscribe({ external_customer_id: 'kid', inheritance: { child_external_customer_ids: ['ghost'] } }), /not found: ghost/)
  await refused(t.tenantId, subscribe({ external_customer_id: 'kid', parent_subscription_id: solo.id }), /only PARENT/)
  await refused(t.tenantId, subscribe({ external_customer_id: 'kid', invoicing_customer_id: customers.kid.id }), /must differ/)
  await refused(t.tenantId, t.api.post('/v1/subscriptions', { external_customer_id: 'kid', parent_subscription_id: parent.id, plan_id: 'plan_other' }), /parent's plan/)
  // plan_id and currency are required unless parent_subscription_id is given (schema)
  assertError(await t.api.post('/v1/subscriptions', { external_customer_id: 'kid' }), 400, 'validation_error')
})

test('adding and removing inherited subscriptions: removal ends the child with subscription.cancelled, and frees the customer', async () => {
  const { t, customers, subscribe } = await setup('acme', 'kid1', 'kid2', 'other')
  const parent = await created(subscribe({ external_customer_id: 'acme', inheritance: { child_external_customer_ids: ['kid1'] } }))
  clock.set(new Date('2026-10-10T00:00:00Z'))
  const added = await t.api.post(`/v1/subscriptions/${parent.id}/inherited`, { add_external_customer_ids: ['kid2'], version: parent.version })
  assert.equal(added.status, 200, JSON.stringify(added.body))
  assert.deepEqual(added.body.inherited_subscriptions.map((s: any) => s.customer_id), [customers.kid1.id, customers.kid2.id])
  const kid2 = added.body.inherited_subscriptions[1]
  assert.equal(kid2.start_date, '2026-10-10T00:00:00.000Z')
  assert.equal(added.body.subscription.version, parent.version + 1)

  clock.set(new Date('2026-10-20T00:00:00Z'))
  const removed = await t.api.post(`/v1/subscriptions/${parent.id}/inherited`, { remove_customer_ids: [customers.kid1.id] })
  assert.equal(removed.status, 200, JSON.stringify(removed.body))
  assert.deepEqual(removed.body.inherited_subscriptions.map((s: any) => s.id), [kid2.id])
  const kid1 = (await inherited(t.api, parent.id)).find((s) => s.customer_id === customers.kid1.id)
  assert.ok(kid1, 'the removed child is still listed')
  assert.deepEqual([kid1.subscription_status, kid1.end_date, kid1.cancelled_at], ['CANCELLED', '2026-10-20T00:00:00.000Z', '2026-10-20T00:00:00.000Z'])
  const cancelled = await p.ctx.orm.em.fork().getConnection().execute(
    `SELECT entity_id FROM system_events_outbox WHERE tenant_id = ? AND event_name = 'subscription.cancelled'`, [t.tenantId])
  assert.deepEqual(cancelled.map((r: any) => r.entity_id), [kid1.id])
  // removing it again changes nothing; a customer that never inherited the parent is refused
  const repeat = await t.api.post(`/v1/subscriptions/${parent.id}/inherited`, { remove_external_customer_ids: ['kid1'] })
  assert.equal(repeat.status, 200, JSON.stringify(repeat.body))
  await refused(t.tenantId, t.api.post(`/v1/subscriptions/${parent.id}/inherited`, { remove_external_customer_ids: ['other'] }), /does not inherit/)
  await refused(t.tenantId, t.api.post(`/v1/subscriptions/${parent.id}/inherited`, { add_external_customer_ids: ['other'], remove_external_customer_ids: ['other'] }), /both added and removed/)
  // kid1 is free to hold its own subscription again
  await created(subscribe({ external_customer_id: 'kid1' }))
  // only PARENT subscriptions have inherited subscriptions; unknown ids are 404
  const solo = await created(subscribe({ external_customer_id: 'other' }))
  await refused(t.tenantId, t.api.post(`/v1/subscriptions/${solo.id}/inherited`, { add_external_customer_ids: ['kid1'] }), /only PARENT/)
  assertError(await t.api.post('/v1/subscriptions/subs_missing/inherited', { add_external_customer_ids: ['kid1'] }), 404, 'not_found')
  clock.set(new Date('2026-10-01T00:00:00Z'))
})

test('the list filters by subscription type', async () => {
  const { t, customers, subscribe } = await setup('acme', 'kid', 'user', 'payer')
  const parent = await created(subscribe({ external_customer_id: 'acme', inheritance: { child_external_customer_ids: ['kid'] } }))
  const delegated = await created(subscribe({ external_customer_id: 'user', invoicing_customer_id: customers.payer.id }))
  const standalone = await created(subscribe({ external_customer_id: 'payer' }))
  const [child] = await inherited(t.api, parent.id)
  const ids = async (q: string) => (await t.api.get(`/v1/subscriptions?${q}`)).body.items.map((s: any) => s.id)
  assert.deepEqual(await ids('subscription_type=PARENT'), [parent.id])
  assert.deepEqual(await ids('subscription_type=INHERITED'), [child.id])
  assert.deepEqual(await ids('subscription_type=DELEGATED_INVOICING'), [delegated.id])
  assert.deepEqual(await ids('subscription_type=STANDALONE'), [standalone.id])
  assert.deepEqual(await ids('subscription_type=PARENT&subscription_type=INHERITED'), [parent.id, child.id])
  assert.equal(delegated.invoicing_customer_id, customers.payer.id)
})

test('grouped invoicing: a standalone subscription joins a parent\'s invoice group and leaves it', async () => {
  const { t, customers, subscribe } = await setup('acme', 'kid', 'member', 'payer')
  const parent = await created(subscribe({ external_customer_id: 'acme', inheritance: { child_external_customer_ids: ['kid'] } }))
  const member = await created(subscribe({ external_customer_id: 'member' }))
  const add = { change_type: 'grouped_invoicing_add', parent_subscription_id: parent.id }
  const preview = await t.api.post(`/v1/subscriptions/${member.id}/modify/preview`, add)
  assert.equal(preview.status, 200, JSON.stringify(preview.body))
  assert.deepEqual([preview.body.before, preview.body.after, preview.body.invoice_preview], [
    { subscription_type: 'STANDALONE', invoicing_customer_id: null, parent_subscription_id: null },
    { subscription_type: 'DELEGATED_INVOICING', invoicing_customer_id: customers.acme.id, parent_subscription_id: parent.id },
    null,
  ])
  assert.equal((await t.api.get(`/v1/subscriptions/${member.id}`)).body.subscription_type, 'STANDALONE', 'a preview writes nothing')
  const applied = await t.api.post(`/v1/subscriptions/${member.id}/modify`, add)
  assert.equal(applied.status, 200, JSON.stringify(applied.body))
  const s = applied.body.subscription
  assert.deepEqual([s.subscription_type, s.invoicing_customer_id, s.parent_subscription_id, applied.body.invoice], ['DELEGATED_INVOICING', customers.acme.id, parent.id, null])
  // a repeat changes nothing
  const repeat = await t.api.post(`/v1/subscriptions/${member.id}/modify`, add)
  assert.equal(repeat.body.subscription.version, s.version)
  // joining the group does not make it an inherited child
  assert.equal((await inherited(t.api, parent.id)).length, 1)

  const [child] = await inherited(t.api, parent.id)
  await refused(t.tenantId, t.api.post(`/v1/subscriptions/${child.id}/modify`, add), /INHERITED/)
  await refused(t.tenantId, t.api.post(`/v1/subscriptions/${child.id}/modify`, { change_type: 'add_line_item', price_id: 'price_any' }), /INHERITED/)
  await refused(t.tenantId, t.api.post(`/v1/subscriptions/${parent.id}/modify`, { change_type: 'grouped_invoicing_add', invoicing_customer_id: customers.payer.id }), /PARENT/)
  await refused(t.tenantId, t.api.post(`/v1/subscriptions/${member.id}/modify`, { ...add, invoicing_customer_id: customers.payer.id }), /exactly one/)
  await refused(t.tenantId, t.api.post(`/v1/subscriptions/${member.id}/modify`, { change_type: 'grouped_invoicing_add', invoicing_customer_id: customers.member.id }), /own customer/)

  const removed = await t.api.post(`/v1/subscriptions/${member.id}/modify`, { change_type: 'grouped_invoicing_remove' })
  assert.equal(removed.status, 200, JSON.stringify(removed.body))
  const r = removed.body.subscription
  assert.deepEqual([r.subscription_type, r.invoicing_customer_id, r.parent_subscription_id], ['STANDALONE', null, null])
})

test('two parents inheriting the same customer at once: exactly one wins (the customer row is locked)', async () => {
  const { t, customers, subscribe } = await setup('acme', 'beta', 'kid')
  const first = await created(subscribe({ external_customer_id: 'acme', inheritance: {} }))
  const second = await created(subscribe({ external_customer_id: 'beta', inheritance: {} }))
  const results = await Promise.all([first, second].map((parent) => t.api.post(`/v1/subscriptions/${parent.id}/inherited`, { add_customer_ids: [customers.kid.id] })))
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 400], JSON.stringify(results.map((r) => r.body)))
  const [row] = await p.ctx.orm.em.fork().getConnection().execute(
    `SELECT count(*)::int AS n FROM subscriptions WHERE tenant_id = ? AND customer_id = ? AND subscription_type = 'INHERITED'`, [t.tenantId, customers.kid.id])
  assert.equal(row.n, 1)
})

test('children created with a backdated parent start with it, and get the plan\'s credit grant catch-up like the parent', async () => {
  clock.set(new Date('2026-11-20T00:00:00Z'))
  const { t, plan, subscribe } = await setup('acme', 'kid')
  await created(t.api.post('/v1/creditgrants', { name: 'Monthly credits', credits: '10', period: 'MONTHLY', plan_id: plan.id }))
  const parent = await created(subscribe({ external_customer_id: 'acme', start_date: '2026-08-15T00:00:00Z', inheritance: { child_external_customer_ids: ['kid'] } }))
  const [child] = await inherited(t.api, parent.id)
  assert.equal(child.start_date, '2026-08-15T00:00:00.000Z')
  await applyDueCreditGrants(p.ctx, { tenantId: t.tenantId })
  const periods = async (subscriptionId: string) => (await p.ctx.orm.em.fork().getConnection().execute(
    `SELECT to_char(period_start AT TIME ZONE 'UTC', 'MM-DD') AS start, application_status FROM credit_grant_applications WHERE subscription_id = ? ORDER BY period_start`,
    [subscriptionId])).map((r: any) => `${r.start} ${r.application_status}`)
  const expected = ['08-15 APPLIED', '09-15 APPLIED', '10-15 APPLIED', '11-15 APPLIED']
  assert.deepEqual(await periods(parent.id), expected)
  assert.deepEqual(await periods(child.id), expected)
  clock.set(new Date('2026-10-01T00:00:00Z'))
})

test('draft activation and incomplete -> active of a parent carry its children along', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subscribe } = await setup('acme', 'kid', 'beta', 'kid2')
  const draft = await created(subscribe({ external_customer_id: 'acme', draft: true, inheritance: { child_external_customer_ids: ['kid'] } }))
  const [child] = await inherited(t.api, draft.id)
  assert.equal(child.subscription_status, 'DRAFT')
  assertError(await t.api.post(`/v1/subscriptions/${child.id}/activate`, {}), 400, 'invalid_operation', /activated with its parent/)
  clock.set(new Date('2026-10-03T00:00:00Z'))
  const activated = await t.api.post(`/v1/subscriptions/${draft.id}/activate`, {})
  assert.equal(activated.status, 200, JSON.stringify(activated.body))
  const after = (await t.api.get(`/v1/subscriptions/${child.id}`)).body
  assert.deepEqual([after.subscription_status, after.start_date, after.current_period_start, after.current_period_end],
    ['ACTIVE', '2026-10-03T00:00:00.000Z', '2026-10-03T00:00:00.000Z', '2026-11-03T00:00:00.000Z'])

  const incomplete = await created(subscribe({ external_customer_id: 'beta', payment_behavior: 'default_incomplete', inheritance: { child_external_customer_ids: ['kid2'] } }))
  const [child2] = await inherited(t.api, incomplete.id)
  assert.equal(child2.subscription_status, 'INCOMPLETE')
  await activateIncompleteSubscription(p.ctx, { tenant_id: t.tenantId, environment_id: t.environments.production }, incomplete.id)
  assert.equal((await t.api.get(`/v1/subscriptions/${child2.id}`)).body.subscription_status, 'ACTIVE')
  // Each parent's first month fee 6.00 (ADVANCE) is invoiced on its own SUBSCRIPTION_CREATE invoice:
  // the draft's at activation (Oct 3 - Nov 3), the incomplete one's at create (Oct 3 - Nov 3). Children get none.
  const invoices = await p.ctx.orm.em.fork().getConnection().execute(
    `SELECT subscription_id, customer_id, billing_reason, subtotal::text FROM invoices WHERE tenant_id = ? ORDER BY created_at, id`, [t.tenantId])
  assert.deepEqual(invoices.map((i: any) => [i.subscription_id, i.customer_id, i.billing_reason, i.subtotal]).sort(), [
    [draft.id, draft.customer_id, 'SUBSCRIPTION_CREATE', '6.00'],
    [incomplete.id, incomplete.customer_id, 'SUBSCRIPTION_CREATE', '6.00'],
  ].sort(), 'children get no invoice')
  clock.set(new Date('2026-10-01T00:00:00Z'))
})
