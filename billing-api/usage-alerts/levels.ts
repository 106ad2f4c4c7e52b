// Pure: the alert levels a usage has reached. A level is reached when usage >= its threshold
// (thresholds are in the meter's unit, the unit of the entitlement's usage_limit). Levels come
// out in rising order (info, warning, critical); disabled alerts reach nothing.
import { D } from '../pricing/index.js'
import type { AlertSettings } from '../features/feature.entity.js'

export const ALERT_LEVELS = ['info', 'warning', 'critical'] as const
export type AlertLevel = (typeof ALERT_LEVELS)[number]

export function reachedLevels(settings: AlertSettings | null, usage: string): { level: AlertLevel; threshold: number }[] {
  if (!settings?.alert_enabled) return []
  return ALERT_LEVELS.flatMap((level) => {
    const t = settings[level]
    return t && D(usage).gte(t.threshold) ? [{ level, threshold: t.threshold }] : []
  })
}
