// A small builder for Grafana dashboard JSON (schema 39): panels laid out left to right in rows
// of 24 columns, every query against the provisioned Prometheus data source (uid "prometheus").

const datasource = { type: 'prometheus', uid: 'prometheus' }

export interface Query {
  expr: string
  legend?: string
}

export interface PanelSpec {
  kind: 'timeseries' | 'stat' | 'row'
  title: string
  description?: string
  queries?: Query[]
  unit?: string
  /** columns of 24 */
  width?: number
  height?: number
  /** stat: value at or above which the panel turns red (and orange at half of it) */
  red?: number
  stacked?: boolean
}

export interface DashboardSpec {
  uid: string
  title: string
  description: string
  tags: string[]
  panels: PanelSpec[]
}

export const row = (title: string): PanelSpec => ({ kind: 'row', title })

export const ts = (title: string, queries: Query[], unit = 'short', extra: Partial<PanelSpec> = {}): PanelSpec => ({ kind: 'timeseries', title, queries, unit, ...extra })

export const stat = (title: string, expr: string, unit = 'short', extra: Partial<PanelSpec> = {}): PanelSpec => ({
  kind: 'stat', title, queries: [{ expr }], unit, width: 4, height: 4, ...extra,
})

function targets(queries: Query[]) {
  return queries.map((q, i) => ({ refId: String.fromCharCode(65 + i), datasource, expr: q.expr, legendFormat: q.legend ?? '__auto', range: true }))
}

function panelJson(p: PanelSpec, id: number, gridPos: { x: number; y: number; w: number; h: number }): Record<string, unknown> {
  if (p.kind === 'row') return { id, type: 'row', title: p.title, collapsed: false, gridPos, panels: [] }
  const base = { id, type: p.kind, title: p.title, description: p.description ?? '', datasource, gridPos, targets: targets(p.queries ?? []) }
  if (p.kind === 'stat') {
    const steps: { color: string; value: number | null }[] = [{ color: 'green', value: null }]
    if (p.red !== undefined) steps.push({ color: 'orange', value: p.red / 2 }, { color: 'red', value: p.red })
    return {
      ...base,
      fieldConfig: { defaults: { unit: p.unit, thresholds: { mode: 'absolute', steps }, color: { mode: 'thresholds' } }, overrides: [] },
      options: { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'background', graphMode: 'area', textMode: 'value_and_name', justifyMode: 'auto', orientation: 'auto' },
    }
  }
  return {
    ...base,
    fieldConfig: {
      defaults: {
        unit: p.unit, min: 0,
        custom: { lineWidth: 1, fillOpacity: p.stacked ? 40 : 10, showPoints: 'never', stacking: { mode: p.stacked ? 'normal' : 'none', group: 'A' } },
      },
      overrides: [],
    },
    options: { legend: { displayMode: 'list', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'desc' } },
  }
}

export function dashboard(spec: DashboardSpec): Record<string, unknown> {
  let x = 0
  let y = 0
  let rowHeight = 0
  const panels = spec.panels.map((p, i) => {
    const w = p.kind === 'row' ? 24 : (p.width ?? 8)
    const h = p.kind === 'row' ? 1 : (p.height ?? 8)
    if (p.kind === 'row' || x + w > 24) {
      y += rowHeight
      x = 0
      rowHeight = 0
    }
    const gridPos = { x, y, w, h }
    x += w
    rowHeight = Math.max(rowHeight, h)
    if (p.kind === 'row') {
      y += h
      x = 0
      rowHeight = 0
    }
    return panelJson(p, i + 1, gridPos)
  })
  return {
    uid: spec.uid, title: spec.title, description: spec.description, tags: spec.tags, timezone: 'utc', editable: false, graphTooltip: 1,
    schemaVersion: 39, version: 1, refresh: '10s', time: { from: 'now-1h', to: 'now' }, timepicker: {}, templating: { list: [] },
    annotations: { list: [] },
    links: [{ type: 'dashboards', tags: ['meterline'], title: 'Meterline', asDropdown: true, includeVars: false, keepTime: true }],
    panels,
  }
}

/** Every PromQL expression of a dashboard's panels. */
export function expressions(dash: Record<string, unknown>): { panel: string; expr: string }[] {
  const panels = Array.isArray(dash.panels) ? (dash.panels as { title?: string; targets?: { expr?: string }[] }[]) : []
  return panels.flatMap((p) => (p.targets ?? []).flatMap((t) => (t.expr ? [{ panel: p.title ?? '', expr: t.expr }] : [])))
}
