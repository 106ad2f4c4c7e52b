// The current usage period of a grant, remembered per subscription record of the live catalog
// (those records are never changed in place: a change replaces them), and reused while the
// instant asked for lies inside it. Computing it (the cadence anchor, the period containing the
// instant) was about a quarter of the CPU of a check and of a spend-cap evaluation (profile in
// docs/benchmarks.md, "Entitlement check").
import { currentUsagePeriod, type CustomerGrant } from '../entitlements/index.js'

type Period = NonNullable<ReturnType<typeof currentUsagePeriod>>

const remembered = new WeakMap<object, Map<string, Period>>()

export function liveUsagePeriod(grants: CustomerGrant[], at: Date): Period | null {
  const first = grants.find((g) => g.entitlement.is_enabled && g.entitlement.usage_reset_period !== null)
  if (!first) return null
  const reset = first.entitlement.usage_reset_period!
  const t = at.getTime()
  let bySub = remembered.get(first.subscription)
  const p = bySub?.get(reset)
  if (p && p.start.getTime() <= t && (p.end === null || t < p.end.getTime())) return p
  const fresh = currentUsagePeriod(grants, at)
  if (fresh && fresh.start.getTime() <= t && (fresh.end === null || t < fresh.end.getTime())) {
    if (!bySub) remembered.set(first.subscription, (bySub = new Map<string, Period>()))
    bySub.set(reset, fresh)
  }
  return fresh
}
