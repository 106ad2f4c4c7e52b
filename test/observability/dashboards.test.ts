// The provisioned dashboards and the alert rules, checked as files: generated and committed
// alike, well formed for Grafana and Prometheus. Their metric names are checked against a live
// scrape in business-metrics.test.ts.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildDashboards } from '../../scripts/grafana/dashboards.js'
import { dashboardText } from '../../scripts/grafana/build.js'
import { ALERTS_FILE, DASHBOARD_DIR, alertGroups, dashboardFiles } from './dashboard-files.js'
import { writeLocalPrometheusConfig } from './local-prometheus.js'

test('the committed dashboards are the generated ones', () => {
  for (const [file, dash] of Object.entries(buildDashboards())) {
    assert.equal(readFileSync(join(DASHBOARD_DIR, file), 'utf8'), dashboardText(dash), `${file}: run npm run dashboards:build`)
  }
})

test('every dashboard is well formed: unique uid and title, panels inside the grid, Prometheus queries', () => {
  const files = dashboardFiles()
  assert.ok(Object.keys(files).length >= 5)
  const uids = new Set<string>()
  const titles = new Set<string>()
  for (const [file, dash] of Object.entries(files)) {
    const uid = String(dash.uid)
    const title = String(dash.title)
    assert.ok(!uids.has(uid), `${file}: uid ${uid} is used twice`)
    assert.ok(!titles.has(title), `${file}: title ${title} is used twice (one folder)`)
    uids.add(uid)
    titles.add(title)
    const panels = dash.panels as { id: number; type: string; gridPos: { x: number; y: number; w: number; h: number }; targets?: { expr?: string; datasource?: { uid?: string } }[] }[]
    assert.equal(new Set(panels.map((p) => p.id)).size, panels.length, `${file}: panel ids are unique`)
    for (const p of panels) {
      assert.ok(p.gridPos.x >= 0 && p.gridPos.x + p.gridPos.w <= 24, `${file}: panel ${p.id} fits in 24 columns`)
      if (p.type === 'row') continue
      assert.ok((p.targets ?? []).length > 0, `${file}: panel ${p.id} has a query`)
      for (const t of p.targets ?? []) {
        assert.equal(t.datasource?.uid, 'prometheus', `${file}: panel ${p.id} reads the provisioned data source`)
        assert.ok(t.expr && t.expr.length > 0)
      }
    }
  }
})

test('alert rules have a unique name, an expression, a severity and a summary', () => {
  const groups = alertGroups()
  const names = new Set<string>()
  const needed = ['MeterlineAggregationLagGrowing', 'MeterlineSpoolFilling', 'MeterlineWebhookFailureRate', 'MeterlineJobFailures', 'MeterlineHigh5xxRate']
  for (const g of groups) {
    assert.ok(g.name, 'a group has a name')
    for (const r of g.rules) {
      assert.ok(/^Meterline[A-Za-z0-9]+$/.test(r.alert), `alert name ${r.alert}`)
      assert.ok(!names.has(r.alert), `${r.alert} is defined twice`)
      names.add(r.alert)
      assert.ok(r.expr.trim().length > 0)
      if (r.for !== undefined) assert.match(r.for, /^\d+[smh]$/)
      assert.ok(['warning', 'critical'].includes(r.labels?.severity ?? ''), `${r.alert} severity`)
      assert.ok(r.annotations?.summary, `${r.alert} summary`)
    }
  }
  for (const n of needed) assert.ok(names.has(n), `${n} is defined`)
})

// promtool comes with the Debian package prometheus, which npm test installs (scripts/stack.sh).
test('promtool accepts the rules and the configuration of the local Prometheus', async () => {
  assert.match(execFileSync('promtool', ['--version'], { encoding: 'utf8' }), /promtool/)
  // every rule of the file (10 today; the count was stale while this test was skipped)
  const rules = alertGroups().reduce((n, g) => n + g.rules.length, 0)
  assert.ok(rules >= 10)
  const out = execFileSync('promtool', ['check', 'rules', ALERTS_FILE], { encoding: 'utf8' })
  assert.match(out, new RegExp(`SUCCESS: ${rules} rules found`))
  const config = await writeLocalPrometheusConfig({ target: '127.0.0.1:8080', interval: '5s' })
  try {
    // check config loads the rule files too; its report goes to stderr on older versions
    const checked = execFileSync('promtool', ['check', 'config', config.file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    assert.match(checked, new RegExp(`SUCCESS: ${rules} rules found`))
  } finally {
    config.cleanup()
  }
})
