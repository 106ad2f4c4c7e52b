// The entitlement check: pure rules (reset periods, combined grants, what remains) with
// hand-computed figures, and POST /v1/entitlements/check over events that went through
// ingest -> Kafka -> aggregator -> ClickHouse buckets.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { eventually, usePlatform } from '../../test/support/platform.js'
import { billDueSubscriptions } from '../billing/bill-due.js'
import { assertError, flatMonthly, newFeature, newPlan } from '../features/test-kit.js'
import { toReportingUnit } from '../features/reporting-unit.js'
import { allowance, combineGrants, type GrantValues } from './access.js'
import { usagePeriodAt } from './usage-period.js'

const d = (s: string) => new Date(s)
const iso = (p: { start: Date; end: Date | null }) => [p.start.toISOString(), p.end?.toISOString() ?? null]

describe('usage reset periods', () => {
  const anniversary = { billing_anchor: d('2026-01-31T10:00:00Z'), billing_cycle: 'anniversary' as const, start_date: d('2026-01-31T10:00:00Z') }
  test('aligned on the billing anchor; months clamp to their last day', () => {
    assert.deepEqual(iso(usagePeriodAt('MONTHLY', anniversary, d('2026-03-05T00:00:00Z'))), ['2026-02-28T10:00:00.000Z', '2026-03-31T10:00:00.000Z'])
    assert.deepEqual(iso(usagePeriodAt('DAILY', anniversary, d('2026-03-05T09:59:59Z'))), ['2026-03-04T10:00:00.000Z', '2026-03-05T10:00:00.000Z'])
    // Jan 31 was a Saturday: weeks run Saturday 10:00 to Saturday 10:00.
    assert.deepEqual(iso(usagePeriodAt('WEEKLY', anniversary, d('2026-03-05T00:00:00Z'))), ['2026-02-28T10:00:00.000Z', '2026-03-07T10:00:00.000Z'])
    assert.deepEqual(iso(usagePeriodAt('YEARLY', anniversary, d('2027-01-31T10:00:00Z'))), ['2027-01-31T10:00:00.000Z', '2028-01-31T10:00:00.000Z'])
    assert.deepEqual(iso(usagePeriodAt('NEVER', anniversary, d('2029-01-01T00:00:00Z'))), ['2026-01-31T10:00:00.000Z', null])
  })
  test('calendar subscriptions reset at calendar boundaries; the first period starts with the subscription', () => {
    const calendar = { billing_anchor: d('2026-11-18T15:00:00Z'), billing_cycle: 'calendar' as const, start_date: d('2026-11-18T15:00:00Z') }
    assert.deepEqual(iso(usagePeriodAt('MONTHLY', calendar, d('2026-11-20T00:00:00Z'))), ['2026-11-18T15:00:00.000Z', '2026-12-01T00:00:00.000Z'])
    assert.deepEqual(iso(usagePeriodAt('MONTHLY', calendar, d('2026-12-20T00:00:00Z'))), ['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'])
    assert.deepEqual(iso(usagePeriodAt('DAILY', calendar, d('2026-12-20T23:00:00Z'))), ['2026-12-20T00:00:00.000Z', '2026-12-21T00:00:00.000Z'])
    // 2026-12-20 is a Sunday: the week began Monday the 14th.
    assert.deepEqual(iso(usagePeriodAt('WEEKLY', calendar, d('2026-12-20T23:00:00Z'))), ['2026-12-14T00:00:00.000Z', '2026-12-21T00:00:00.000Z'])
  })
})

describe('combined grants and what remains', () => {
  const g = (v: Partial<GrantValues>): GrantValues => ({ is_enabled: true, usage_limit: null, is_soft_limit: false, static_value: null, usage_reset_period: 'MONTHLY', ...v })
  test('limits of enabled grants add up; an unlimited grant lifts the limit; disabled grants add nothing', () => {
    assert.deepEqual(combineGrants([g({ usage_limit: 1000 }), g({ usage_limit: 500, usage_reset_period: 'DAILY' }), g({ is_enabled: false, usage_limit: 7 })]),
      { is_enabled: true, usage_limit: '1500', is_soft_limit: false, static_value: null, usage_reset_period: 'MONTHLY' })
    assert.equal(combineGrants([g({ usage_limit: 1000 }), g({})]).usage_limit, null)
    assert.equal(combineGrants([g({ usage_limit: 10 }), g({ usage_limit: 5, is_soft_limit: true })]).is_soft_limit, true)
    assert.deepEqual(combineGrants([g({ is_enabled: false })]), { is_enabled: false, usage_limit: null, is_soft_limit: false, static_value: null, usage_reset_period: null })
    assert.equal(combineGrants([]).is_enabled, false)
  })
  test('remaining never goes below zero; a hard limit reached closes access, a soft one does not', () => {
    assert.deepEqual(allowance({ is_enabled: true, usage_limit: '1500', is_soft_limit: false }, '750.5'), { remaining: '749.5', has_access: true })
    assert.deepEqual(allowance({ is_enabled: true, usage_limit: '1500', is_soft_limit: false }, '1500'), { remaining: '0', has_access: false })
    assert.deepEqual(allowance({ is_enabled: true, usage_limit: '700', is_soft_limit: true }, '750'), { remaining: '0', has_access: true })
    assert.deepEqual(allowance({ is_enabled: true, usage_limit: null, is_soft_limit: false }, '1e9'), { remaining: null, has_access: true })
    assert.deepEqual(allowance({ is_enabled: false, usage_limit: '10', is_soft_limit: false }, '0'), { remaining: null, has_access: false })
  })
  test('reporting units divide by the conversion rate, 12 decimals half-up', () => {
    const gb = { conversion_rate: 1000, unit_singular: 'k token', unit_plural: 'k tokens' }
    assert.deepEqual(toReportingUnit('750', gb), { value: '0.75', unit: 'k tokens' })
    assert.deepEqual(toReportingUnit('1000', gb), { value: '1', unit: 'k token' })
    // 2 / 3 = 0.666666666666|666.. -> 0.666666666667
    assert.deepEqual(toReportingUnit('2', { ...gb, conversion_rate: 3 }), { value: '0.666666666667', unit: 'k tokens' })
    assert.equal(toReportingUnit('5', null), null)
  })
})

const clock = new ManualClock(d('2026-10-15T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })

test('POST /v1/entitlements/check: usage in the current reset period, limit, remaining, access; isolated by tenant', async () => {
  clock.set(d('2026-10-15T00:00:00Z'))
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'Tokens', event_name: 'llm', aggregation: { type: 'SUM', field: 'tokens' } }))
  const tokens = await newFeature(t.api, {
    name: 'Tokens', lookup_key: 'tokens', type: 'metered', meter_id: meter.id,
    reporting_unit: { conversion_rate: 1000, unit_singular: 'k token', unit_plural: 'k tokens' },
  })
  const sso = await newFeature(t.api, { name: 'SSO', type: 'boolean' })
  const seats = await newFeature(t.api, { name: 'Seats', type: 'static' })
  const plan = await newPlan(t.api, { prices: [flatMonthly('10')] })
  const ent = await created(t.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: tokens.id, usage_limit: 1000, usage_reset_period: 'MONTHLY' }))
  await created(t.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: sso.id, is_enabled: false }))
  await created(t.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: seats.id, static_value: '5' }))
  const acme = await created(t.api.post('/v1/customers', { external_id: 'acme', name: 'Acme' }))
  await created(t.api.post('/v1/customers', { external_id: 'nosub' }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: acme.id, plan_id: plan.id, currency: 'USD', start_date: '2026-10-15T00:00:00Z' }))
  const boost = await created(t.api.post('/v1/addons', { name: 'Boost', lookup_key: 'boost', prices: [{ ...flatMonthly('5'), invoice_cadence: 'ADVANCE' }] }))
  const addonEnt = await created(t.api.post('/v1/entitlements', { entity_type: 'ADDON', entity_id: boost.id, feature_id: tokens.id, usage_limit: 500, usage_reset_period: 'WEEKLY' }))
  // An add-on granting the feature that this customer has not attached adds nothing.
  const unused = await created(t.api.post('/v1/addons', { name: 'Unused', lookup_key: 'unused' }))
  await created(t.api.post('/v1/entitlements', { entity_type: 'ADDON', entity_id: unused.id, feature_id: tokens.id, usage_limit: 100000, usage_reset_period: 'MONTHLY' }))

  clock.set(d('2026-11-20T12:00:00Z'))
  const ev = (id: string, ts: string, n: number, customer = 'acme') => ({ event_id: id, event_name: 'llm', external_customer_id: customer, timestamp: ts, properties: { tokens: n } })
  await ingestAll(t.api, [
    ev('e1', '2026-11-10T00:00:00Z', 700), // the previous period (Oct 15 - Nov 15)
    ev('e2', '2026-11-16T08:00:00Z', 400),
    ev('e3', '2026-11-20T00:00:30.500Z', 350), // inside a minute: read from the edge rows
    ev('e4', '2026-11-18T00:00:00Z', 9000, 'someone-else'),
  ])
  await eventually(async () => ((await usage(t.api, meter.id, {})).value === '10450' ? true : undefined), 'all events in ClickHouse')

  const check = (body: object, api = t.api) => api.post('/v1/entitlements/check', body)
  // usage_as_of is null until the meter's backfill is done (a new meter: its buckets may hold part of its events).
  const res = await eventually(async () => {
    const r = await check({ external_customer_id: 'acme', feature_lookup_key: 'tokens' })
    assert.equal(r.status, 200, JSON.stringify(r.body))
    return r.body.usage_as_of === null ? undefined : r
  }, 'a usage_as_of once the meter is active')
  // Every event was acknowledged before the check, so the usage is as of a later instant.
  const { usage_as_of: asOf, ...body } = res.body
  assert.ok(Date.parse(asOf) > Date.now() - 60_000, asOf)
  // Nov 15 - Dec 15: 400 + 350 = 750 of 1000; 250 left; 0.75 k tokens.
  assert.deepEqual(body, {
    customer_id: acme.id, external_customer_id: 'acme', feature_id: tokens.id, feature_lookup_key: 'tokens', feature_type: 'metered',
    is_enabled: true, has_access: true, static_value: null, usage_limit: '1000', is_soft_limit: false, usage_reset_period: 'MONTHLY',
    period_start: '2026-11-15T00:00:00.000Z', period_end: '2026-12-15T00:00:00.000Z', usage: '750', remaining: '250',
    reported_usage: { value: '0.75', unit: 'k tokens' }, entitlement_ids: [ent.id], checked_at: '2026-11-20T12:00:00.000Z',
  })
  // The attached add-on's 500 adds to the plan's 1000; the plan's grant comes first, so its MONTHLY period stays.
  clock.set(d('2026-11-20T12:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }) // into the Nov 15 - Dec 15 period
  const version = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body.version
  const attached = await t.api.post(`/v1/subscriptions/${sub.id}/modify`, { change_type: 'addon_attach', addon_id: boost.id, version })
  assert.equal(attached.status, 200, JSON.stringify(attached.body))
  const withAddon = (await check({ external_customer_id: 'acme', feature_lookup_key: 'tokens' })).body
  assert.deepEqual([withAddon.usage_limit, withAddon.usage, withAddon.remaining, withAddon.usage_reset_period, withAddon.entitlement_ids],
    ['1500', '750', '750', 'MONTHLY', [ent.id, addonEnt.id]])
  await t.api.put(`/v1/entitlements/${addonEnt.id}`, { is_enabled: false })
  // The reset period is honoured: daily, anchored at 00:00 like the subscription -> only e3.
  await t.api.put(`/v1/entitlements/${ent.id}`, { usage_reset_period: 'DAILY', usage_limit: 300 })
  const daily = (await check({ customer_id: acme.id, feature_id: tokens.id })).body
  assert.deepEqual([daily.period_start, daily.period_end, daily.usage, daily.remaining, daily.has_access],
    ['2026-11-20T00:00:00.000Z', '2026-11-21T00:00:00.000Z', '350', '0', false])
  await t.api.put(`/v1/entitlements/${ent.id}`, { is_soft_limit: true })
  assert.deepEqual((({ usage, remaining, has_access, is_soft_limit }) => ({ usage, remaining, has_access, is_soft_limit }))((await check({ external_customer_id: 'acme', feature_id: tokens.id })).body),
    { usage: '350', remaining: '0', has_access: true, is_soft_limit: true })
  await t.api.put(`/v1/entitlements/${ent.id}`, { usage_reset_period: 'NEVER', usage_limit: null })
  const never = (await check({ external_customer_id: 'acme', feature_id: tokens.id })).body
  assert.deepEqual([never.period_start, never.period_end, never.usage, never.remaining, never.has_access], ['2026-10-15T00:00:00.000Z', null, '1450', null, true])

  const ssoCheck = (await check({ external_customer_id: 'acme', feature_id: sso.id })).body
  assert.deepEqual([ssoCheck.is_enabled, ssoCheck.has_access, ssoCheck.usage], [false, false, null])
  const seatsCheck = (await check({ external_customer_id: 'acme', feature_id: seats.id })).body
  assert.deepEqual([seatsCheck.is_enabled, seatsCheck.has_access, seatsCheck.static_value, seatsCheck.usage], [true, true, '5', null])
  const none = (await check({ external_customer_id: 'nosub', feature_id: tokens.id })).body
  assert.deepEqual([none.is_enabled, none.has_access, none.usage, none.entitlement_ids], [false, false, null, []])

  assertError(await check({ external_customer_id: 'ghost', feature_id: tokens.id }), 404, 'not_found', /customer/)
  assertError(await check({ external_customer_id: 'acme', feature_id: 'feat_x' }), 404, 'not_found', /feature/)
  assertError(await check({ external_customer_id: 'acme', customer_id: acme.id, feature_id: tokens.id }), 400, 'validation_error', /exactly one of customer_id/)
  assertError(await check({ external_customer_id: 'acme' }), 400, 'validation_error', /exactly one of feature_id/)
  assertError(await check({ external_customer_id: 'acme', feature_id: tokens.id, extra: 1 }), 400, 'validation_error', /extra|additional/)

  // Another tenant's key sees neither the customer nor the feature.
  const other = await p.newTenant('other')
  await created(other.api.post('/v1/customers', { external_id: 'acme' }))
  assertError(await check({ customer_id: acme.id, feature_id: tokens.id }, other.api), 404, 'not_found', /customer/)
  assertError(await check({ external_customer_id: 'acme', feature_id: tokens.id }, other.api), 404, 'not_found', /feature/)
})
