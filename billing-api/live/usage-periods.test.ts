// The remembered usage period equals the one computed afresh at every instant, across period
// boundaries (to the millisecond), for each reset period and both billing cycles.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { currentUsagePeriod, type CustomerGrant } from '../entitlements/index.js'
import { liveUsagePeriod } from './usage-periods.js'

test('the remembered usage period is the computed one at every instant', () => {
  const resets = ['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY', 'NEVER'] as const
  for (const billing_cycle of ['anniversary', 'calendar'] as const) {
    for (const reset of resets) {
      const start = new Date('2026-01-31T10:15:00Z')
      const subscription = { id: `s-${billing_cycle}-${reset}`, start_date: start, billing_anchor: start, billing_cycle, trial_end: null }
      const grants = [{ entitlement: { is_enabled: true, usage_reset_period: reset }, subscription }] as unknown as CustomerGrant[]
      const instants: number[] = [start.getTime()]
      for (let t = start.getTime(); t < Date.parse('2028-03-01T00:00:00Z'); t += 3 * 3_600_000 + 7 * 60_000) instants.push(t)
      // Every boundary and the milliseconds around it.
      for (const t of [...instants]) {
        const p = currentUsagePeriod(grants, new Date(t))
        if (p?.end) instants.push(p.end.getTime() - 1, p.end.getTime(), p.end.getTime() + 1)
      }
      for (const t of instants.sort((a, b) => a - b)) {
        assert.deepEqual(liveUsagePeriod(grants, new Date(t)), currentUsagePeriod(grants, new Date(t)), `${billing_cycle} ${reset} at ${new Date(t).toISOString()}`)
      }
    }
  }
})
