// The dashboards and alert rules as files, for the checks and the snapshot.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { expressions } from '../../scripts/grafana/panels.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const DASHBOARD_DIR = join(ROOT, 'grafana', 'dashboards')
export const ALERTS_FILE = join(ROOT, 'deploy', 'prometheus', 'alerts.yml')

export interface AlertRule {
  alert: string
  expr: string
  for?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
}

export interface RuleGroup {
  name: string
  rules: AlertRule[]
}

export function dashboardFiles(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    readdirSync(DASHBOARD_DIR)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => [f, JSON.parse(readFileSync(join(DASHBOARD_DIR, f), 'utf8')) as Record<string, unknown>]),
  )
}

export function alertGroups(): RuleGroup[] {
  const doc = parse(readFileSync(ALERTS_FILE, 'utf8')) as { groups?: RuleGroup[] }
  return doc.groups ?? []
}

/** Every expression of every dashboard and alert rule, with where it comes from. */
export function allExpressions(): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = []
  for (const [file, dash] of Object.entries(dashboardFiles())) {
    for (const e of expressions(dash)) out.push({ where: `${file}: ${e.panel}`, expr: e.expr })
  }
  for (const g of alertGroups()) for (const r of g.rules) out.push({ where: `alerts.yml: ${r.alert}`, expr: r.expr })
  return out
}
