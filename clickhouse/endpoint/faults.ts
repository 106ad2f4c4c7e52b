// Faults a remote ClickHouse shows a client, injected on request (tests and `npm run chaos`):
// a stale keep-alive socket reset when it is reused, a connection reset after a statement
// committed, a statement that starts only after its client gave up (a timeout while it
// completes), and an exception after the status line (mid-stream). Off unless the endpoint was
// started with faults enabled.

export const FAULT_KINDS = ['reset_reused_socket', 'reset_after_commit', 'stall_before_run', 'error_mid_stream'] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

export interface FaultRule {
  kind: FaultKind
  /** statements whose SQL contains this text (case-insensitive); absent: any statement */
  match?: string
  /** how many statements it hits */
  count: number
  /** stall_before_run: how long */
  ms?: number
}

export class Faults {
  private rules: FaultRule[] = []
  readonly injected: Record<FaultKind, number> = { reset_reused_socket: 0, reset_after_commit: 0, stall_before_run: 0, error_mid_stream: 0 }

  /** Replaces the rules (an empty list clears them). Throws on a malformed rule. */
  set(rules: unknown): void {
    if (!Array.isArray(rules)) throw new Error('expected a JSON array of fault rules')
    this.rules = rules.map((r) => {
      const rule = r as Partial<FaultRule>
      if (!FAULT_KINDS.includes(rule.kind as FaultKind)) throw new Error(`unknown fault kind ${JSON.stringify(rule.kind)}`)
      if (!Number.isInteger(rule.count) || rule.count! < 1) throw new Error('count must be a positive integer')
      return { kind: rule.kind!, match: rule.match?.toLowerCase(), count: rule.count!, ms: rule.ms ?? 0 }
    })
  }

  /** The rule of this kind that hits this statement, counted as injected; undefined when none. */
  take(kind: FaultKind, sql: string): FaultRule | undefined {
    const text = sql.toLowerCase()
    const rule = this.rules.find((r) => r.kind === kind && r.count > 0 && (!r.match || text.includes(r.match)))
    if (!rule) return undefined
    rule.count--
    this.injected[kind]++
    return rule
  }

  pending(): FaultRule[] {
    return this.rules.filter((r) => r.count > 0)
  }
}
