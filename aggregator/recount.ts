// Pure recount of one meter's aggregation over individual events, with decimal.js: the
// reference the buckets are audited against (scripts/verify-usage.ts).
import { Decimal } from 'decimal.js'

export class Recount {
  private sum = new Decimal(0)
  private max: Decimal | null = null
  private latest: { ts: number; id: string; value: string } | null = null
  private unique = new Set<string>()
  count = 0

  constructor(private readonly aggregation: string) {}

  add(value: string, text: string, ts: number, eventId: string): void {
    this.count++
    const v = new Decimal(value)
    this.sum = this.sum.plus(v)
    if (this.max === null || v.gt(this.max)) this.max = v
    if (this.latest === null || ts > this.latest.ts || (ts === this.latest.ts && eventId > this.latest.id)) this.latest = { ts, id: eventId, value }
    this.unique.add(text)
  }

  /** The query layer's value: AVG is reported as its sum (callers divide by the count). */
  get value(): Decimal {
    switch (this.aggregation) {
      case 'COUNT': return new Decimal(this.count)
      case 'COUNT_UNIQUE': return new Decimal(this.unique.size)
      case 'MAX': return this.max ?? new Decimal(0)
      case 'LATEST': return new Decimal(this.latest?.value ?? 0)
      default: return this.sum
    }
  }
}
