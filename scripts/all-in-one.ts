// The local platform: ingest, aggregator, billing-api and scheduler in one process.
//   node --import tsx scripts/all-in-one.ts [--demo] [--prometheus <url>]   (the URL is only printed)
import { loadConfigOrExit } from '../platform/config.js'
import { ensureDemoTenant } from './demo-tenant.js'
import { ALL_SERVICES, runServices } from './composition-root.js'
import { demoBanner } from './banner.js'

const config = loadConfigOrExit()
const platform = await runServices(ALL_SERVICES, { migrate: true })

if (process.argv.includes('--demo')) {
  const demo = await ensureDemoTenant(platform.ctx.orm, config.dataDir, config.apiKeyHashing)
  console.log(demoBanner({ apiUrl: platform.url, ingestUrl: platform.url, what: 'ingest + aggregator + billing-api + scheduler, one process', demo }))
}
