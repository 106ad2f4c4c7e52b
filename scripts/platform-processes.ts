// The local platform as production runs it: every role its own supervised process, ClickHouse
// over HTTP (scripts/topology/).
//   node --import tsx scripts/platform-processes.ts [--demo] [--prometheus <url>]
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openOrm } from '../billing-api/database.js'
import { loadConfigOrExit } from '../platform/config.js'
import { ensureDemoTenant } from './demo-tenant.js'
import { demoBanner } from './banner.js'
import { startTopology } from './topology/platform.js'
import { readAggregatorRequest } from '../platform/topology-file.js'
import type { CreatedTenant } from '../billing-api/tenants/index.js'

const config = loadConfigOrExit()
let demo: CreatedTenant | undefined
let stopping = false
// The admin API asks for a number of aggregator processes: it writes topology-request.json, then
// signals this process. Requests apply one after another, the latest wins. The handler is in place
// before the start: billing-api serves while the aggregators still join one after another, and a
// request made then waits for the start instead of being lost to Node's default for SIGUSR1 (the
// inspector).
const starting = startTopology(config, process.env, {
  aggregators: config.topologyAggregators,
  faults: process.env.CLICKHOUSE_ENDPOINT_FAULTS === 'true',
  // The demo tenant before billing-api serves, so its key works from the first request.
  beforeRoles: async () => {
    if (!process.argv.includes('--demo')) return
    const orm = await openOrm(config.databaseUrl, 2, config.postgres)
    try {
      demo = await ensureDemoTenant(orm, config.dataDir, config.apiKeyHashing)
    } finally {
      await orm.close()
    }
  },
})
let resizing: Promise<void> = starting.then(() => undefined, () => undefined)
process.on('SIGUSR1', () => {
  resizing = resizing.then(async () => {
    const request = readAggregatorRequest(config.dataDir)
    if (stopping || !request) return
    const topology = await starting
    await topology.setAggregators(request.aggregators).catch((err: unknown) => console.error(`[topology] changing the aggregator processes failed: ${String(err)}`))
  })
})
const topology = await starting
const roles = topology.supervisor.states().map((p) => `${p.name} (pid ${p.pid}, :${p.port})`).join(', ')
if (demo) console.log(demoBanner({ apiUrl: topology.apiUrl, ingestUrl: topology.ingestUrl, what: `one process per role: ${roles}`, demo }))
else console.log(`[topology] running: ${roles}`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return
    stopping = true
    console.log(`${signal}: stopping ingest, then billing-api and the scheduler, then the aggregators, then the ClickHouse endpoint`)
    const t0 = Date.now()
    void topology.stop().then(({ caughtUp }) => {
      const summary = `every role stopped in ${Date.now() - t0} ms${caughtUp ? '; the aggregators had committed every event' : ''}`
      console.log(summary)
      reportStop(config.dataDir, t0, summary)
      process.exit(0)
    })
  })
}

/** last-stop.txt, which `npm run down` prints: ingest's line (its spool) if it wrote one in this stop, then the topology's. */
function reportStop(dataDir: string, since: number, summary: string): void {
  const file = join(dataDir, 'last-stop.txt')
  try {
    const ingest = existsSync(file) && statSync(file).mtimeMs >= since ? readFileSync(file, 'utf8').trim().replace(/^\S+ /, 'ingest ') : ''
    writeFileSync(file, `${new Date().toISOString()} ${[ingest, summary].filter(Boolean).join('; ')}\n`)
  } catch {
    // the data directory is gone: nothing to report
  }
}
