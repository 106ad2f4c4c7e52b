// Prints the compatibility figures and one line per SDK operation.
import type { SdkOperation } from './operations.js'
import type { Outcome } from './recorder.js'

export interface Figures {
  total: number
  inScope: number
  passing: number
}

export function report(operations: SdkOperation[], outcomes: Map<string, Outcome>, outOfScope: (op: SdkOperation) => string | undefined): Figures {
  const lines: string[] = []
  let passing = 0
  let inScope = 0
  for (const op of operations) {
    const excluded = outOfScope(op)
    const label = `${op.name} (${op.method} ${op.path})`
    if (excluded) {
      lines.push(`  out of scope  ${label}: ${excluded}`)
      continue
    }
    inScope++
    const o = outcomes.get(op.name)
    if (o?.ok) passing++
    lines.push(o?.ok ? `  pass          ${label}` : `  FAIL          ${label}: ${o?.reason ?? 'not called'}`)
  }
  const pct = inScope === 0 ? 0 : (100 * passing) / inScope
  console.log(`Flexprice SDK compatibility: ${operations.length} operations, ${inScope} in scope, ${passing} pass (${pct.toFixed(1)} %), ${operations.length - inScope} out of scope`)
  console.log(lines.join('\n'))
  return { total: operations.length, inScope, passing }
}
