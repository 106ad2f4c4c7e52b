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

/**
 * Pure recount of a WEIGHTED_SUM meter: every event of the meter (before the range too, for the
 * value carried in), then the time-weighted average over [from, to) as the query layer gives it:
 * per customer, each value holds from its event to the customer's next (by timestamp, event_id);
 * the integrals add up and are divided by the range's length.
 */
export class WeightedRecount {
  private points = new Map<string, { ts: number; id: string; value: string }[]>()

  add(customer: string, value: string, ts: number, eventId: string): void {
    const list = this.points.get(customer)
    if (list) list.push({ ts, id: eventId, value })
    else this.points.set(customer, [{ ts, id: eventId, value }])
  }

  /** integral in value x ms, and the events inside [from, to) */
  over(from: number, to: number): { integral: Decimal; count: number } {
    let integral = new Decimal(0)
    let count = 0
    for (const list of this.points.values()) {
      list.sort((a, b) => a.ts - b.ts || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      list.forEach((p, i) => {
        if (p.ts >= from && p.ts < to) count++
        const start = Math.max(p.ts, from)
        const end = Math.min(i + 1 < list.length ? list[i + 1].ts : to, to)
        if (end > start) integral = integral.plus(new Decimal(p.value).times(end - start))
      })
    }
    return { integral, count }
  }
}
