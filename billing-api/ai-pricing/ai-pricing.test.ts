// POST /ai/pricing/parse over HTTP: the rule-based reader, its refusals, that nothing is saved,
// that the answer is accepted as-is by the catalog routes, and the LLM path (a local
// OpenAI-compatible stand-in) with its fallback.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { PricingParserConfig } from '../../platform/config.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { usePlatform } from '../../test/support/platform.js'
import { parsePricingDescription } from './deterministic-parser.js'

const p = usePlatform({ services: ['billing-api'] })
const TEXT = 'Growth plan: $49/month, first 1000 API calls free, then $0.01 per call up to 10k, $0.005 after; includes SSO'

test('parses a description into plan, prices, meters, features and entitlements, and saves nothing', async () => {
  const t = await p.newTenant()
  const res = await t.api.post('/v1/ai/pricing/parse', { description: TEXT })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.parser, 'deterministic')
  assert.equal(res.body.fallback_reason, undefined)
  assert.deepEqual(res.body.plan, { name: 'Growth', lookup_key: 'growth', description: TEXT })
  assert.deepEqual(res.body.prices, [
    { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '49', billing_period: 'MONTHLY', billing_period_count: 1, invoice_cadence: 'ADVANCE', display_name: 'Monthly fee' },
    {
      type: 'USAGE', billing_model: 'TIERED', tier_mode: 'SLAB', currency: 'USD', billing_period: 'MONTHLY', billing_period_count: 1, invoice_cadence: 'ARREAR',
      display_name: 'API calls', meter_key: 'api_call',
      tiers: [{ up_to: 1000, unit_amount: '0' }, { up_to: 10000, unit_amount: '0.01' }, { up_to: null, unit_amount: '0.005' }],
    },
  ])
  assert.deepEqual(res.body.meters, [{ key: 'api_call', name: 'API calls', event_name: 'api_call', aggregation: { type: 'COUNT' } }])
  assert.deepEqual(res.body.features.map((f: { key: string; type: string }) => `${f.key}:${f.type}`), ['api_call:metered', 'sso:boolean'])
  assert.deepEqual(res.body.entitlements.map((e: { feature_key: string; usage_reset_period: string | null }) => `${e.feature_key}:${e.usage_reset_period}`), ['api_call:MONTHLY', 'sso:null'])
  for (const table of ['plans', 'prices', 'meters', 'features', 'entitlements']) assert.equal(await countRows(p, table, t.tenantId), 0, table)
})

test('the answer is what the catalog routes take: meter, feature, plan with prices, entitlements', async () => {
  const t = await p.newTenant()
  const parsed = (await t.api.post('/v1/ai/pricing/parse', { description: TEXT })).body
  const meterIds: Record<string, string> = {}
  for (const m of parsed.meters) {
    const r = await t.api.post('/v1/meters', { name: m.name, event_name: m.event_name, aggregation: m.aggregation })
    assert.equal(r.status, 201, JSON.stringify(r.body))
    meterIds[m.key] = r.body.id
  }
  const prices = parsed.prices.map(({ meter_key, ...price }: { meter_key?: string }) => ({ ...price, ...(meter_key ? { meter_id: meterIds[meter_key] } : {}) }))
  const plan = await t.api.post('/v1/plans', { name: parsed.plan.name, lookup_key: parsed.plan.lookup_key, description: parsed.plan.description, prices })
  assert.equal(plan.status, 201, JSON.stringify(plan.body))
  assert.equal(plan.body.prices.length, 2)
  for (const [i, e] of parsed.entitlements.entries()) {
    const { key, meter_key, ...f } = parsed.features.find((x: { key: string }) => x.key === e.feature_key)
    assert.ok(key)
    const feature = await t.api.post('/v1/features', { ...f, ...(meter_key ? { meter_id: meterIds[meter_key] } : {}) })
    assert.equal(feature.status, 201, JSON.stringify(feature.body))
    const { feature_key, ...values } = e
    assert.ok(feature_key)
    const ent = await t.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.body.id, feature_id: feature.body.id, ...values })
    assert.equal(ent.status, 201, `entitlement ${i}: ${JSON.stringify(ent.body)}`)
  }
})

test('what cannot be read is a 400 naming it', async () => {
  const t = await p.newTenant()
  assertError(await t.api.post('/v1/ai/pricing/parse', { description: '$49/month, blorp the widgets' }), 400, 'validation_error', /could not understand "blorp the widgets" \(not understood: blorp, widgets\)/)
  assertError(await t.api.post('/v1/ai/pricing/parse', { description: '$0.01 per call up to 10k' }), 400, 'validation_error', /what is charged above 10000 calls is not stated/)
  assertError(await t.api.post('/v1/ai/pricing/parse', { description: '' }), 400, 'validation_error')
  assertError(await t.api.post('/v1/ai/pricing/parse', { text: 'x' }), 400, 'validation_error')
  assertError(await p.client().post('/v1/ai/pricing/parse', { description: '$49/month' }), 401, 'permission_denied')
})

/** A local OpenAI-compatible endpoint answering `content` (or failing with `status`). */
async function standIn(answer: { status?: number; content?: string }) {
  const seen: { auth: string; body: { model: string; messages: { role: string; content: string }[] } }[] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      seen.push({ auth: req.headers.authorization!, body: JSON.parse(body) })
      if (answer.status) return res.writeHead(answer.status).end('{}')
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: answer.content } }] }))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const settings: PricingParserConfig = {
    kind: 'openai',
    llm: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: 'sk-test', model: 'test-model', timeoutMs: 5000 },
  }
  return { seen, settings, close: () => new Promise((r) => server.close(r)) }
}

async function withParser<T>(settings: PricingParserConfig, run: () => Promise<T>): Promise<T> {
  const before = p.ctx.config.pricingParser
  p.ctx.config.pricingParser = settings
  try {
    return await run()
  } finally {
    p.ctx.config.pricingParser = before
  }
}

test('PRICING_PARSER=openai: a valid model answer is used and says so', async () => {
  const t = await p.newTenant()
  // the model reads "$2 per 1000 tokens" as a package price, as the rule-based reader would
  const modelAnswer = { ...parsePricingDescription('$2 per 1000 tokens'), plan: { name: 'Tokens', lookup_key: 'tokens', description: 'ignored' } }
  const llm = await standIn({ content: JSON.stringify(modelAnswer) })
  try {
    const res = await withParser(llm.settings, () => t.api.post('/v1/ai/pricing/parse', { description: 'two dollars for every thousand tokens' }))
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.parser, 'openai')
    assert.deepEqual(res.body.plan, { name: 'Tokens', lookup_key: 'tokens', description: 'two dollars for every thousand tokens' })
    assert.deepEqual(res.body.prices[0].transform_quantity, { divide_by: 1000, round: 'up' })
    assert.equal(llm.seen.length, 1)
    assert.equal(llm.seen[0].auth, 'Bearer sk-test')
    assert.equal(llm.seen[0].body.model, 'test-model')
    assert.equal(llm.seen[0].body.messages[1].content, 'two dollars for every thousand tokens')
  } finally {
    await llm.close()
  }
})

test('PRICING_PARSER=openai: an invalid, inconsistent or failed answer falls back to the rule-based reader', async () => {
  const t = await p.newTenant()
  const good = parsePricingDescription('$0.002 per API call')
  const answers: [{ status?: number; content?: string }, RegExp][] = [
    [{ content: 'not json' }, /openai: the model answer is not JSON/],
    [{ content: JSON.stringify({ ...good, prices: [{ ...good.prices[0], amount: 0.002 }] }) }, /does not match the schema: \/prices\/0\/amount must be string/],
    [{ content: JSON.stringify({ ...good, meters: [] }) }, /inconsistent: prices\[0\]\.meter_key does not name a meter/],
    [{ status: 500 }, /openai: the model endpoint answered HTTP 500/],
  ]
  for (const [answer, reason] of answers) {
    const llm = await standIn(answer)
    try {
      const res = await withParser(llm.settings, () => t.api.post('/v1/ai/pricing/parse', { description: '$0.002 per API call' }))
      assert.equal(res.status, 200, JSON.stringify(res.body))
      assert.equal(res.body.parser, 'deterministic')
      assert.match(res.body.fallback_reason, reason)
      assert.deepEqual(res.body.prices, good.prices)
    } finally {
      await llm.close()
    }
  }
  // both fail: the rule-based reader's 400
  const llm = await standIn({ status: 503 })
  try {
    const res = await withParser(llm.settings, () => t.api.post('/v1/ai/pricing/parse', { description: 'gibberish' }))
    assertError(res, 400, 'validation_error', /could not understand "gibberish"/)
  } finally {
    await llm.close()
  }
})
