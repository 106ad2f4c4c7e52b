// Flexprice's TypeScript SDK (@flexprice/sdk, pinned) against the real platform, used as a user
// who switched by changing the base URL: every operation whose resource the spec covers is called
// with valid input, and passes when the SDK accepts the answer and the answer is right. Prints the
// figures and the list of passing, failing and out-of-scope operations.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { Flexprice } from '@flexprice/sdk'
import { ManualClock } from '../../platform/clock.js'
import { startTestPlatform, type TestPlatform } from '../support/platform.js'
import { sdkOperations } from './operations.js'
import { outOfScope } from './scope.js'
import { Recorder } from './recorder.js'
import { report } from './report.js'
import type { Scenario } from './scenarios/context.js'
import { customers, featuresAndGroups, priceUnits } from './scenarios/catalog.js'
import { addonsAndEntitlements, creditGrants, plansAndPrices } from './scenarios/pricing.js'
import { coupons, taxes } from './scenarios/commerce.js'
import { subscriptions } from './scenarios/subscriptions.js'
import { invoices } from './scenarios/invoices.js'
import { wallets } from './scenarios/wallets.js'
import { events, integrations, tenantAndAccess } from './scenarios/platform.js'
import { deletions } from './scenarios/cleanup.js'
import { GOAL_SHARE, PASSING } from './passing.js'

let p: TestPlatform
const clock = new ManualClock(new Date('2026-09-20T10:00:00Z'))
before(async () => {
  p = await startTestPlatform({ clock })
})
after(async () => {
  await p?.stop()
})

test('Flexprice SDK operations in scope work against Meterline', async () => {
  const t = await p.newTenant('SDK user')
  const s: Scenario = {
    sdk: new Flexprice({ serverURL: `${p.url}/v1`, apiKeyAuth: t.apiKey }),
    rec: new Recorder(),
    p,
    clock,
    api: t.api,
    tenantId: t.tenantId,
    userId: t.userId,
    environmentId: t.environments.production,
    ids: {},
  }
  for (const step of [
    customers, featuresAndGroups, priceUnits, plansAndPrices, addonsAndEntitlements, creditGrants, coupons, taxes,
    events, subscriptions, invoices, wallets, tenantAndAccess, integrations, deletions,
  ]) await step(s)

  const operations = sdkOperations()
  const figures = report(operations, s.rec.outcomes, outOfScope)
  const inScope = operations.filter((op) => !outOfScope(op))
  const uncalled = inScope.filter((op) => !s.rec.outcomes.has(op.name)).map((op) => op.name)
  assert.deepEqual(uncalled, [], 'in-scope operations the suite never called')
  const unknown = [...s.rec.outcomes.keys()].filter((name) => !operations.some((op) => op.name === name))
  assert.deepEqual(unknown, [], 'outcomes recorded under names the SDK does not have')
  const regressed = PASSING.filter((name) => !s.rec.outcomes.get(name)?.ok)
  assert.deepEqual(regressed, [], 'operations that passed before and fail now')
  const goal = Math.ceil(GOAL_SHARE * figures.inScope)
  console.log(`goal: ${goal} of ${figures.inScope} (${GOAL_SHARE * 100} %); ${figures.passing >= goal ? 'met' : `${goal - figures.passing} operations short`}`)
})
