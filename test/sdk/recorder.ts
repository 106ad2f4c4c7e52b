// Records, per SDK operation, whether a call through the SDK was accepted by the SDK (no error,
// its response validation passed) and the answer was right (the scenario's check passed).
import { FlexPriceError } from '@flexprice/sdk/sdk/models/flex-price-error.js'
import { ResponseValidationError } from '@flexprice/sdk/sdk/models/response-validation-error.js'

export interface Outcome {
  ok: boolean
  /** why it failed: the status and our ErrorResponse, the SDK's error, or the failed check */
  reason?: string
}

const short = (s: string) => s.replace(/\s+/g, ' ').slice(0, 160)

export function describeError(err: unknown): string {
  if (err instanceof ResponseValidationError && err.statusCode < 400) return short(`${err.statusCode} answer refused by the SDK: ${err.pretty().split('\n').slice(1).join(' ')}`)
  if (err instanceof FlexPriceError) {
    let body = err.body
    try {
      const parsed = JSON.parse(err.body) as { code?: string; message?: string }
      if (parsed.code) body = `${parsed.code}: ${parsed.message ?? ''}`
    } catch {
      // not JSON: the raw text
    }
    return short(`${err.statusCode} ${err.name}: ${body || err.message}`)
  }
  return short(err instanceof Error ? `${err.name}: ${err.message}` : String(err))
}

export class Recorder {
  readonly outcomes = new Map<string, Outcome>()

  /**
   * Calls `name` through `fn` and runs `check` on its result. The result is returned only when
   * both passed, so later steps that need it are skipped (and their operations recorded as
   * failing with the reason) instead of failing on an undefined id.
   */
  async call<T>(name: string, fn: () => Promise<T>, check: (result: T) => void | Promise<void>): Promise<T | undefined> {
    let result: T
    try {
      result = await fn()
    } catch (err) {
      this.fail(name, describeError(err))
      return undefined
    }
    try {
      await check(result)
    } catch (err) {
      this.fail(name, `wrong answer: ${describeError(err)}`)
      return undefined
    }
    if (!this.outcomes.has(name)) this.outcomes.set(name, { ok: true })
    return result
  }

  /** An operation that could not be called because what it needs was not created. */
  skip(name: string, missing: string): void {
    this.fail(name, `not reached: needs ${missing}`)
  }

  private fail(name: string, reason: string): void {
    if (!this.outcomes.get(name) || this.outcomes.get(name)?.ok) this.outcomes.set(name, { ok: false, reason })
  }
}
