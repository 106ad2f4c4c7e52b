// The rule-based pricing reader against a table of phrasings, each with the configuration it
// must produce, worked out by hand.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ValidationError } from '../../platform/errors.js'
import { parsePricingDescription } from './deterministic-parser.js'
import type { ParsedPrice } from './parsed-pricing.js'

const monthlyUsage = { type: 'USAGE', billing_period: 'MONTHLY', billing_period_count: 1, invoice_cadence: 'ARREAR' } as const
const usage = (currency: string, meter_key: string, display_name: string, rest: Partial<ParsedPrice>): ParsedPrice =>
  ({ ...monthlyUsage, currency, meter_key, display_name, ...rest }) as ParsedPrice
const fixed = (currency: string, amount: string, billing_period: ParsedPrice['billing_period'], display_name: string, rest: Partial<ParsedPrice> = {}): ParsedPrice =>
  ({ type: 'FIXED', billing_model: 'FLAT_FEE', currency, amount, billing_period, billing_period_count: 1, invoice_cadence: 'ADVANCE', display_name, ...rest })
const flat = (amount: string) => ({ billing_model: 'FLAT_FEE', amount }) as const
const pkg = (amount: string, divide_by: number) => ({ billing_model: 'PACKAGE', amount, transform_quantity: { divide_by, round: 'up' } }) as const
const slab = (...tiers: [number | null, string][]) => ({ billing_model: 'TIERED', tier_mode: 'SLAB', tiers: tiers.map(([up_to, unit_amount]) => ({ up_to, unit_amount })) }) as const
const volume = (...tiers: [number | null, string][]) => ({ ...slab(...tiers), tier_mode: 'VOLUME' }) as const

interface Case {
  text: string
  plan?: string
  prices: ParsedPrice[]
  /** meter key -> aggregation */
  meters?: Record<string, string>
  /** feature key -> [usage_limit, usage_reset_period] or 'boolean' */
  entitlements?: Record<string, [number | null, string | null] | 'boolean'>
  warnings?: string[]
}

const cases: Case[] = [
  { text: '$0.002 per API call', prices: [usage('USD', 'api_call', 'API calls', flat('0.002'))], meters: { api_call: 'COUNT' }, entitlements: { api_call: [null, 'MONTHLY'] } },
  {
    text: 'first 1000 free, then $0.01 per call up to 10k, $0.005 after',
    prices: [usage('USD', 'call', 'Calls', slab([1000, '0'], [10000, '0.01'], [null, '0.005']))],
    meters: { call: 'COUNT' },
  },
  { text: '$5 per 1000 tokens', prices: [usage('USD', 'token', 'Tokens', pkg('5', 1000))], meters: { token: 'SUM:tokens' } },
  { text: '$49/month', prices: [fixed('USD', '49', 'MONTHLY', 'Monthly fee')], meters: {}, entitlements: {} },
  { text: '$49 per month', prices: [fixed('USD', '49', 'MONTHLY', 'Monthly fee')] },
  { text: '$490 per year', prices: [fixed('USD', '490', 'ANNUAL', 'Annual fee')] },
  { text: '$1,200 annually', prices: [fixed('USD', '1200', 'ANNUAL', 'Annual fee')] },
  { text: '$500 one-time setup fee', prices: [fixed('USD', '500', 'ONETIME', 'One-time fee')] },
  {
    text: 'Pro plan: $49/month plus $0.002 per API call',
    plan: 'Pro',
    prices: [fixed('USD', '49', 'MONTHLY', 'Monthly fee'), usage('USD', 'api_call', 'API calls', flat('0.002'))],
  },
  {
    text: 'Starter plan - $19 per month, 14-day free trial',
    plan: 'Starter',
    prices: [fixed('USD', '19', 'MONTHLY', 'Monthly fee', { trial_period_days: 14 })],
  },
  { text: '€0.10 per GB', prices: [usage('EUR', 'gb', 'GB', flat('0.1'))], meters: { gb: 'SUM:gb' } },
  { text: '£10 per seat per month', prices: [fixed('GBP', '10', 'MONTHLY', 'Seat')], meters: {} },
  { text: 'USD 0.01 per request', prices: [usage('USD', 'request', 'Requests', flat('0.01'))] },
  { text: '20 GBP/month', prices: [fixed('GBP', '20', 'MONTHLY', 'Monthly fee')] },
  { text: 'EUR 29 a month', prices: [fixed('EUR', '29', 'MONTHLY', 'Monthly fee')] },
  { text: '2 cents per SMS', prices: [usage('USD', 'sms', 'SMS', flat('0.02'))], warnings: ['no currency was written; USD assumed'] },
  { text: '0.5¢ per email', prices: [usage('USD', 'email', 'Emails', flat('0.005'))], warnings: ['no currency was written; USD assumed'] },
  {
    text: '1000 free API calls per month, then $0.001 per call',
    prices: [usage('USD', 'api_call', 'API calls', slab([1000, '0'], [null, '0.001']))],
    entitlements: { api_call: [null, 'MONTHLY'] },
  },
  {
    text: 'Volume pricing: $0.01 per call up to 10k, $0.008 up to 100k, $0.005 above 100k',
    prices: [usage('USD', 'call', 'Calls', volume([10000, '0.01'], [100000, '0.008'], [null, '0.005']))],
  },
  { text: '$0.50 per million tokens', prices: [usage('USD', 'token', 'Tokens', pkg('0.5', 1000000))] },
  { text: '$0.02 per 1k requests', prices: [usage('USD', 'request', 'Requests', pkg('0.02', 1000))] },
  {
    text: 'first 10k tokens free, then $2 per 1M tokens',
    prices: [usage('USD', 'token', 'Tokens', slab([10000, '0'], [null, '0.000002']))],
  },
  {
    text: '$0.01 per call for the first 1000, $0.008 for the next 9000, $0.005 thereafter',
    prices: [usage('USD', 'call', 'Calls', slab([1000, '0.01'], [10000, '0.008'], [null, '0.005']))],
  },
  {
    text: '$0.01 per call, $0.005 per call above 10k',
    prices: [usage('USD', 'call', 'Calls', slab([10000, '0.01'], [null, '0.005']))],
  },
  {
    text: '$49/month or $490/year',
    prices: [fixed('USD', '49', 'MONTHLY', 'Monthly fee'), fixed('USD', '490', 'ANNUAL', 'Annual fee')],
  },
  { text: '¥1000 per month', prices: [fixed('JPY', '1000', 'MONTHLY', 'Monthly fee')] },
  {
    text: 'CHF 25 per month plus CHF 0.05 per minute',
    prices: [fixed('CHF', '25', 'MONTHLY', 'Monthly fee'), usage('CHF', 'minute', 'Minutes', flat('0.05'))],
    meters: { minute: 'SUM:minutes' },
  },
  {
    text: '$990 per year plus $0.001 per event',
    prices: [fixed('USD', '990', 'ANNUAL', 'Annual fee'), usage('USD', 'event', 'Events', { ...flat('0.001'), billing_period: 'ANNUAL' })],
    entitlements: { event: [null, 'YEARLY'] },
  },
  {
    text: 'includes 10,000 API calls per month',
    prices: [],
    meters: { api_call: 'COUNT' },
    entitlements: { api_call: [10000, 'MONTHLY'] },
  },
  { text: 'up to 5 projects', prices: [], entitlements: { project: [5, 'NEVER'] } },
  {
    text: 'Team plan: $99/month, includes SSO and priority support',
    plan: 'Team',
    prices: [fixed('USD', '99', 'MONTHLY', 'Monthly fee')],
    entitlements: { sso: 'boolean', priority_support: 'boolean' },
  },
  {
    text: '$0.002 per API call, up to 1M API calls per month',
    prices: [usage('USD', 'api_call', 'API calls', flat('0.002'))],
    entitlements: { api_call: [1000000, 'MONTHLY'] },
  },
  {
    text: '$20 per month; first 100 messages free; then 1 cent per message',
    prices: [fixed('USD', '20', 'MONTHLY', 'Monthly fee'), usage('USD', 'message', 'Messages', slab([100, '0'], [null, '0.01']))],
  },
  {
    text: '$99 per month billed annually',
    prices: [fixed('USD', '1188', 'ANNUAL', 'Annual fee')],
    warnings: ['"$99 per month billed annually": 99 a month billed once a year is 1188 a year'],
  },
  { text: '$15 per additional user per month', prices: [fixed('USD', '15', 'MONTHLY', 'User')] },
  {
    text: 'first 1000 calls free, $0.01 per additional call',
    prices: [usage('USD', 'call', 'Calls', slab([1000, '0'], [null, '0.01']))],
  },
  {
    text: '$49/month plus $0.002 per API call, first 1000 calls free',
    prices: [fixed('USD', '49', 'MONTHLY', 'Monthly fee'), usage('USD', 'api_call', 'API calls', slab([1000, '0'], [null, '0.002']))],
  },
  {
    text: '$0.01 per call, 500 calls free',
    prices: [usage('USD', 'call', 'Calls', slab([500, '0'], [null, '0.01']))],
  },
  {
    text: 'Calls 1-1000: $0.01 per call, 1001-5000: $0.008 per call, 5000+: $0.006 per call',
    prices: [usage('USD', 'call', 'Calls', slab([1000, '0.01'], [5000, '0.008'], [null, '0.006']))],
  },
]

for (const c of cases) {
  test(`parses: ${c.text}`, () => {
    const out = parsePricingDescription(c.text)
    assert.deepEqual(out.prices, c.prices)
    assert.equal(out.plan.name, c.plan ?? 'Custom plan')
    assert.equal(out.plan.description, c.text)
    if (c.meters) {
      assert.deepEqual(
        Object.fromEntries(out.meters.map((m) => [m.key, m.aggregation.field ? `${m.aggregation.type}:${m.aggregation.field}` : m.aggregation.type])),
        c.meters,
      )
    }
    if (c.entitlements) {
      assert.deepEqual(
        Object.fromEntries(out.entitlements.map((e) => {
          const f = out.features.find((x) => x.key === e.feature_key)!
          return [e.feature_key, f.type === 'boolean' ? 'boolean' : [e.usage_limit, e.usage_reset_period]]
        })),
        c.entitlements,
      )
    }
    assert.deepEqual(out.warnings, c.warnings ?? [])
    // every usage price's meter, and every entitlement's feature, is in the answer
    for (const p of out.prices.filter((x) => x.type === 'USAGE')) assert.ok(out.meters.some((m) => m.key === p.meter_key), p.meter_key)
    for (const e of out.entitlements) assert.ok(out.features.some((f) => f.key === e.feature_key), e.feature_key)
  })
}

test('a metered feature names its meter and units', () => {
  const out = parsePricingDescription('$0.002 per API call')
  assert.deepEqual(out.meters, [{ key: 'api_call', name: 'API calls', event_name: 'api_call', aggregation: { type: 'COUNT' } }])
  assert.deepEqual(out.features, [{ key: 'api_call', name: 'API calls', lookup_key: 'api_calls', type: 'metered', meter_key: 'api_call', unit_singular: 'API call', unit_plural: 'API calls' }])
  assert.deepEqual(out.entitlements, [{ feature_key: 'api_call', is_enabled: true, usage_limit: null, is_soft_limit: false, usage_reset_period: 'MONTHLY' }])
  assert.equal(out.plan.lookup_key, 'custom_plan')
})

const refusals: [string, RegExp][] = [
  ['gibberish here', /could not understand "gibberish here" \(not understood: gibberish, here\)/],
  ['$49/month, blorp the widgets', /could not understand "blorp the widgets" \(not understood: blorp, widgets\)/],
  ['$0.01 per call up to 10k', /what is charged above 10000 calls is not stated/],
  ['$5 per month and €3 per call', /mixes EUR and USD/],
  ['$49', /how often is \$49 charged/],
  ['$0.001 per call after 1000', /what is charged up to 1000 is not stated \(e\.g\. "first 1000 free"\)/],
  ['$0.0004 per request after the first 1M requests', /what is charged up to 1000000 is not stated/],
  ['$5 per week billed monthly', /could not understand/],
  ['first 1000 free', /of what\?/],
  ['$0.01 per call, $0.02 per call', /calls already have a price/],
  ['first 1000 calls free, then $0.01 per call, $0.005 per call up to 5000', /comes after the open-ended price/],
  ['$0.01 per call up to 10k, $0.005 up to 5k, $0.001 after', /tier bound 5000 is not above the previous one \(10000\)/],
  ['first 100 free, then $1 per 3 calls', /not an exact amount per unit/],
  ['', /description is empty/],
]

for (const [text, message] of refusals) {
  test(`refuses: ${JSON.stringify(text)}`, () => {
    assert.throws(() => parsePricingDescription(text), (err: unknown) => {
      assert.ok(err instanceof ValidationError)
      assert.match(err.message, message)
      return true
    })
  })
}
