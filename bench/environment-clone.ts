// bench:clone: an environment with F metered features (each with its meter) and P plans (3 prices
// and 3 entitlements each) cloned to the tenant's other environment, then cloned again (which
// copies nothing). Prints records copied per second and the repeat's time. The copy runs in this
// process as the clone job's worker runs it (one transaction per feature, per meter, per plan).
//   npm run bench:clone -- --features 200 --plans 200
// It prints numbers; it asserts only that everything was copied once.
import { parseArgs } from 'node:util'
import os from 'node:os'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfigOrExit } from '../platform/config.js'
import { startPlatform } from '../scripts/composition-root.js'
import { createTenant } from '../billing-api/tenants/index.js'
import { runEnvironmentClone } from '../billing-api/environment-clone/index.js'

const { values: args } = parseArgs({ options: { features: { type: 'string' }, plans: { type: 'string' } } })
const FEATURES = Number(args.features ?? 200)
const PLANS = Number(args.plans ?? 200)

const base = loadConfigOrExit()
const chdbPath = join(base.dataDir, 'bench-clone-chdb')
rmSync(chdbPath, { recursive: true, force: true })
const config = { ...base, clickhouse: { ...base.clickhouse, chdbPath }, port: 0 }
const platform = await startPlatform(config, { services: ['billing-api'], migrate: true, schedule: false, relay: false })

async function call(apiKey: string, method: string, path: string, body?: unknown): Promise<{ id: string }> {
  const res = await fetch(platform.url + path, {
    method, headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body),
  })
  const json = (await res.json()) as { id: string }
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

try {
  const tenant = await createTenant(platform.ctx.orm.em.fork(), { name: `bench-clone-${Date.now()}` }, config.apiKeyHashing)
  const key = tenant.apiKey
  const features: string[] = []
  const meters: string[] = []
  for (let i = 0; i < FEATURES; i++) {
    const meter = await call(key, 'POST', '/v1/meters', { name: `m${i}`, event_name: `e${i}`, aggregation: { type: 'SUM', field: 'n' } })
    meters.push(meter.id)
    features.push((await call(key, 'POST', '/v1/features', { name: `Feature ${i}`, type: 'metered', lookup_key: `f${i}`, meter_id: meter.id })).id)
  }
  for (let i = 0; i < PLANS; i++) {
    const usd = { currency: 'USD', billing_period: 'MONTHLY' }
    const plan = await call(key, 'POST', '/v1/plans', {
      name: `Plan ${i}`, lookup_key: `p${i}`,
      prices: [
        { ...usd, type: 'FIXED', billing_model: 'FLAT_FEE', amount: '49', invoice_cadence: 'ADVANCE' },
        { ...usd, type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.01', meter_id: meters[i % FEATURES], invoice_cadence: 'ARREAR' },
        { ...usd, type: 'USAGE', billing_model: 'TIERED', tier_mode: 'SLAB', meter_id: meters[(i + 1) % FEATURES], invoice_cadence: 'ARREAR', tiers: [{ up_to: 1000, unit_amount: '0' }, { up_to: null, unit_amount: '0.002' }] },
      ],
    })
    for (let k = 0; k < 3; k++) {
      await call(key, 'POST', '/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: features[(i + k) % FEATURES], usage_limit: 1000, usage_reset_period: 'MONTHLY' })
    }
  }
  const pair = { tenant_id: tenant.tenantId, source_environment_id: tenant.environments.production, target_environment_id: tenant.environments.development, actor: tenant.userId }
  const t0 = performance.now()
  const first = await runEnvironmentClone(platform.ctx.orm, pair)
  const firstS = (performance.now() - t0) / 1000
  const t1 = performance.now()
  const again = await runEnvironmentClone(platform.ctx.orm, pair)
  const againS = (performance.now() - t1) / 1000
  const copied = Object.values(first.created).reduce((a, n) => a + n, 0)
  const expected = FEATURES * 2 + PLANS * 7
  if (copied !== expected || Object.values(again.created).some((n) => n !== 0)) throw new Error(`copied ${copied}, expected ${expected}; repeat ${JSON.stringify(again.created)}`)
  console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`)
  console.log('| features | plans | records copied | first run (s) | records/s | repeat run (s) |')
  console.log('|---|---|---|---|---|---|')
  console.log(`| ${FEATURES} | ${PLANS} | ${copied} | ${firstS.toFixed(2)} | ${Math.round(copied / firstS)} | ${againS.toFixed(2)} |`)
} finally {
  await platform.stop()
  rmSync(chdbPath, { recursive: true, force: true })
}
