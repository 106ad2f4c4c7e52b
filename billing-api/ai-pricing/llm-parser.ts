// The optional LLM reader (PRICING_PARSER=openai): an OpenAI-compatible chat completions
// endpoint asked for JSON in the parsed-pricing shape. Its answer is trusted only after it
// passes the same JSON schema the route answers with, plus the cross-references a schema cannot
// express; anything else is an error the caller turns into a fallback to the rule-based reader.
import { Ajv } from 'ajv'
import { parsedPricingSchema, type ParsedPricing } from './parsed-pricing.js'

export interface LlmSettings {
  url: string
  apiKey: string
  model: string
  timeoutMs: number
}

const ajv = new Ajv({ allErrors: false, strict: false })
const validShape = ajv.compile<ParsedPricing>(parsedPricingSchema)

const INSTRUCTIONS = [
  'You turn a natural-language pricing description into billing configuration.',
  'Answer with one JSON object only, matching this JSON schema exactly (no other keys):',
  JSON.stringify(parsedPricingSchema),
  'Rules: amounts are decimal strings ("0.002"); currency is an ISO 4217 code; USAGE prices are billed ARREAR and',
  'name their meter with meter_key; FIXED prices are billed ADVANCE; tiers are ordered, each up_to an inclusive',
  'integer bound and the last tier up_to null; "$5 per 1000 units" is PACKAGE with transform_quantity.divide_by 1000;',
  'every usage price has a meter, a metered feature with meter_key and an entitlement; plan.description is the input text.',
].join('\n')

/** What a schema cannot say: references resolve, tiers end open-ended and ascend. */
function crossCheck(p: ParsedPricing): string | null {
  const meters = new Set(p.meters.map((m) => m.key))
  const features = new Set(p.features.map((f) => f.key))
  for (const [i, price] of p.prices.entries()) {
    if (price.type === 'USAGE' && (!price.meter_key || !meters.has(price.meter_key))) return `prices[${i}].meter_key does not name a meter`
    if (price.type === 'USAGE' && price.invoice_cadence !== 'ARREAR') return `prices[${i}]: usage prices are billed in ARREAR`
    if (price.billing_model === 'TIERED') {
      const tiers = price.tiers ?? []
      if (!tiers.length || !price.tier_mode) return `prices[${i}]: TIERED prices need tier_mode and tiers`
      if (tiers[tiers.length - 1].up_to !== null || tiers.slice(0, -1).some((t, k) => t.up_to === null || (k > 0 && t.up_to <= tiers[k - 1].up_to!))) {
        return `prices[${i}].tiers must ascend and end with up_to null`
      }
    } else if (price.amount === undefined) {
      return `prices[${i}].amount is required`
    }
    if (price.billing_model === 'PACKAGE' && !price.transform_quantity) return `prices[${i}]: PACKAGE prices need transform_quantity`
  }
  for (const [i, f] of p.features.entries()) {
    if (f.type === 'metered' && (!f.meter_key || !meters.has(f.meter_key))) return `features[${i}].meter_key does not name a meter`
  }
  for (const [i, e] of p.entitlements.entries()) {
    if (!features.has(e.feature_key)) return `entitlements[${i}].feature_key does not name a feature`
  }
  return null
}

/** Throws with the reason when the endpoint fails or answers something unusable. */
export async function parseWithLlm(settings: LlmSettings, description: string): Promise<ParsedPricing> {
  const res = await fetch(`${settings.url.replace(/\/$/, '')}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${settings.apiKey}` },
    body: JSON.stringify({
      model: settings.model,
      temperature: 0,
      response_format: { type: 'json_object' },
      messages: [{ role: 'system', content: INSTRUCTIONS }, { role: 'user', content: description }],
    }),
    signal: AbortSignal.timeout(settings.timeoutMs),
  })
  if (!res.ok) throw new Error(`the model endpoint answered HTTP ${res.status}`)
  const body = (await res.json()) as { choices?: { message?: { content?: unknown } }[] }
  const content = body.choices?.[0]?.message?.content
  if (typeof content !== 'string') throw new Error('the model answer has no message content')
  let parsed: unknown
  try {
    parsed = JSON.parse(content)
  } catch {
    throw new Error('the model answer is not JSON')
  }
  if (!validShape(parsed)) {
    const e = validShape.errors?.[0]
    throw new Error(`the model answer does not match the schema: ${e?.instancePath || '/'} ${e?.message ?? ''}`.trim())
  }
  const broken = crossCheck(parsed)
  if (broken) throw new Error(`the model answer is inconsistent: ${broken}`)
  return { ...parsed, plan: { ...parsed.plan, description } }
}
