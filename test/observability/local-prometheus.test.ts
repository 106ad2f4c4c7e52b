// The local Prometheus of `npm run up` (scripts/prometheus.sh) against a running platform: the
// platform's /metrics is a target that is up, and every alert rule is loaded and evaluated.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { freePort } from '../support/private-services.js'
import { eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'
import { alertGroups } from './dashboard-files.js'
import { startLocalPrometheus, type LocalPrometheus } from './local-prometheus.js'

let p: TestPlatform
let prom: LocalPrometheus

before(async () => {
  p = await startTestPlatform({ services: ['billing-api'] })
  prom = await startLocalPrometheus({ port: await freePort(), target: new URL(p.url).host, interval: '1s' })
})
after(async () => {
  await prom?.stop()
  await p?.stop()
})

const api = async (path: string) => ((await (await fetch(`${prom.url}/api/v1/${path}`)).json()) as { data: any }).data

test('the platform is scraped: its target is up and up{job="all-in-one"} is 1', async () => {
  const target = await eventually(async () => {
    const t = (await api('targets')).activeTargets.find((x: any) => x.labels.job === 'all-in-one')
    return t?.health === 'up' ? t : undefined
  }, 'the target up')
  assert.equal(target.scrapeUrl, `${p.url}/metrics`)
  const up = await eventually(async () => (await api('query?query=up%7Bjob%3D%22all-in-one%22%7D')).result[0], 'the up series')
  assert.equal(up.value[1], '1')
  // a platform metric arrived through the scrape
  const series = await eventually(async () => (await api('query?query=process_resident_memory_bytes')).result[0], 'a platform metric')
  assert.equal(series.metric.job, 'all-in-one')
})

test('every alert rule of deploy/prometheus/alerts.yml is loaded and evaluates without error', async () => {
  const names = alertGroups().flatMap((g) => g.rules.map((r) => r.alert)).sort()
  const loaded = await eventually(async () => {
    const rules = (await api('rules')).groups.flatMap((g: any) => g.rules) as { name: string; health: string; lastError?: string }[]
    return rules.length === names.length && rules.every((r) => r.health !== 'unknown') ? rules : undefined
  }, 'the rules evaluated')
  assert.deepEqual(loaded.map((r) => r.name).sort(), names)
  for (const r of loaded) assert.equal(r.health, 'ok', `${r.name}: ${r.lastError ?? ''}`)
})
