// Which reader answers POST /ai/pricing/parse (PRICING_PARSER): the rule-based one, or an LLM
// with the rule-based one as the fallback whenever the LLM fails or answers something invalid.
import type { PricingParserConfig } from '../../platform/config.js'
import { parsePricingDescription } from './deterministic-parser.js'
import { parseWithLlm, type LlmSettings } from './llm-parser.js'
import type { ParsedPricing } from './parsed-pricing.js'

export type ParserName = 'deterministic' | 'openai'

/** A reader of pricing descriptions; throws when it cannot produce a valid answer. */
export interface PricingReader {
  name: ParserName
  read(description: string): Promise<ParsedPricing>
}

export const deterministicReader: PricingReader = {
  name: 'deterministic',
  read: async (description) => parsePricingDescription(description),
}

export const llmReader = (settings: LlmSettings): PricingReader => ({
  name: 'openai',
  read: (description) => parseWithLlm(settings, description),
})

export interface ParseOutcome extends ParsedPricing {
  parser: ParserName
  /** set when the configured reader was not used: why */
  fallback_reason?: string
}

export function readerFor(config: PricingParserConfig): PricingReader {
  return config.kind === 'openai' ? llmReader(config.llm) : deterministicReader
}

/** The configured reader's answer, or the rule-based reader's when the configured one fails. */
export async function parsePricing(config: PricingParserConfig, description: string): Promise<ParseOutcome> {
  const reader = readerFor(config)
  try {
    return { parser: reader.name, ...(await reader.read(description)) }
  } catch (err) {
    if (reader === deterministicReader) throw err
    const reason = err instanceof Error ? err.message : String(err)
    return { parser: deterministicReader.name, fallback_reason: `${reader.name}: ${reason}`, ...(await deterministicReader.read(description)) }
  }
}
