// The rules that tie a feature's optional settings to its type. They run on the feature as it
// will be stored (after an update is merged), so create and update cannot disagree.
import { ValidationError } from '../../platform/errors.js'
import type { AlertSettings, Feature, ReportingUnit } from './feature.entity.js'

export interface AlertSettingsInput {
  alert_enabled?: boolean
  critical?: { threshold: number } | null
  warning?: { threshold: number } | null
  info?: { threshold: number } | null
}

export function normalizeAlertSettings(input: AlertSettingsInput | null | undefined): AlertSettings | null {
  if (input == null) return null
  const level = (l: { threshold: number } | null | undefined) => (l ? { threshold: l.threshold } : null)
  return { alert_enabled: input.alert_enabled ?? false, critical: level(input.critical), warning: level(input.warning), info: level(input.info) }
}

export function normalizeReportingUnit(input: ReportingUnit | null | undefined): ReportingUnit | null {
  if (input == null) return null
  return { conversion_rate: input.conversion_rate, unit_singular: input.unit_singular, unit_plural: input.unit_plural }
}

type Shape = Pick<Feature, 'type' | 'meter_id' | 'unit_singular' | 'unit_plural' | 'alert_settings' | 'reporting_unit'>

export function validateFeatureShape(f: Shape): void {
  if (f.type === 'metered') {
    if (!f.meter_id) throw new ValidationError('meter_id is required for metered features', 'meter_id')
  } else {
    // Meters, usage alerts and reporting units only mean something for usage that is counted.
    for (const field of ['meter_id', 'alert_settings', 'reporting_unit'] as const) {
      if (f[field] != null) throw new ValidationError(`${field} is only allowed on metered features, not ${f.type}`, field)
    }
  }
  if ((f.unit_singular == null) !== (f.unit_plural == null)) {
    throw new ValidationError('unit_singular and unit_plural must be set together', f.unit_singular == null ? 'unit_singular' : 'unit_plural')
  }
  if (f.alert_settings) validateAlertSettings(f.alert_settings)
}

function validateAlertSettings(a: AlertSettings): void {
  if (a.alert_enabled && !a.critical) throw new ValidationError('alert_settings.critical is required when alerts are enabled', 'alert_settings.critical')
  // Usage grows through info, then warning, then critical.
  const levels = (['info', 'warning', 'critical'] as const).filter((l) => a[l])
  for (let i = 1; i < levels.length; i++) {
    const [lower, higher] = [levels[i - 1], levels[i]]
    if (a[lower]!.threshold >= a[higher]!.threshold) {
      throw new ValidationError(`alert_settings.${lower}.threshold must be below alert_settings.${higher}.threshold`, `alert_settings.${lower}.threshold`)
    }
  }
}
