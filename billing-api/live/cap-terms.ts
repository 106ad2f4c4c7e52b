// The terms of one customer's hard cap on one feature (its grants combined, the meter, the usage
// period, the event's key) are the same from one committed write to the next until a start or
// end date of one of its subscriptions, add-ons or entitlements passes or the period ends; any
// other change reloads the catalog's scope or holdings objects. Spend caps keep the terms per
// holdings object and recompute them only then.
type Dated = { start_date: Date | null; end_date: Date | null }

/**
 * The instants around `at` between which no start or end date of `items` lies: grants computed
 * at `at` hold for every instant in [from, until).
 */
export function undatedWindow(items: Iterable<Dated>, at: number): { from: number; until: number } {
  let from = -Infinity
  let until = Infinity
  for (const x of items) {
    for (const d of [x.start_date, x.end_date]) {
      if (d === null) continue
      const t = d.getTime()
      if (t <= at) from = Math.max(from, t)
      else until = Math.min(until, t)
    }
  }
  return { from, until }
}
