// `npm run dashboards:build`: writes grafana/dashboards/<name>.json from scripts/grafana/dashboards.ts.
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildDashboards } from './dashboards.js'

export const DASHBOARD_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'grafana', 'dashboards')

export function dashboardText(dash: Record<string, unknown>): string {
  return JSON.stringify(dash, null, 2) + '\n'
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [file, dash] of Object.entries(buildDashboards())) {
    writeFileSync(join(DASHBOARD_DIR, file), dashboardText(dash))
    console.log(`wrote grafana/dashboards/${file}`)
  }
}
