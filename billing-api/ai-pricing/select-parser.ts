// Which reader answers POST /ai/pricing/parse (PRICING_PARSER): the rule-based one, or an LLM
// with the rule-based one as the fallback whenever the LLM fails or answers something invalid.
import type { PricingParserConfig } from '../../platform/config.js'
import { parsePricingDescription } from './deterministic-parser.js'
import { parseWithLlm } from './llm-parser.js'
import type { ParsedPricing } from './parsed-pricing.js'

export type ParserName = 'deterministic' | 'openai'

export interface ParseOutcome extends ParsedPricing {
  parser: ParserName
  /** set when the configured LLM was not used: why */
  fallback_reason?: string
}

export async function parsePricing(config: PricingParserConfig, description: string): Promise<ParseOutcome> {
  if (config.kind === 'openai') {
    try {
      return { parser: 'openai', ...(await parseWithLlm(config.llm, description)) }
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err)
      return { parser: 'deterministic', fallback_reason: `openai: ${reason}`, ...parsePricingDescription(description) }
    }
  }
  return { parser: 'deterministic', ...parsePricingDescription(description) }
}
