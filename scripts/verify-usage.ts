// Audit: recounts a tenant's usage from events_raw, meter by meter, through the aggregator's
// own meter rules, and compares it with the bucket read the API and invoices use. Exits 1 on
// any difference. Run it on a quiescent system (nothing in flight in the aggregator).
//   npm run usage:verify -- --tenant T [--environment E] [--from ISO] [--to ISO]
import { parseArgs } from 'node:util'
import { loadConfigOrExit } from '../platform/config.js'
import { startPlatform } from './composition-root.js'
import { postgresMeterSource } from '../billing-api/meters/index.js'
import { auditMeters } from '../aggregator/usage-audit.js'

const { values: args } = parseArgs({
  options: { tenant: { type: 'string' }, environment: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } },
})
if (!args.tenant) {
  console.error('usage: npm run usage:verify -- --tenant T [--environment E] [--from ISO] [--to ISO]')
  process.exit(2)
}
const from = new Date(args.from ?? '2000-01-01T00:00:00Z')
const to = new Date(args.to ?? '2100-01-01T00:00:00Z')
const platform = await startPlatform(loadConfigOrExit(), { services: [], schedule: false, relay: false, listen: false })
let differences = 0
try {
  const meters = (await postgresMeterSource(platform.ctx.orm).load())
    .filter((m) => m.tenant_id === args.tenant && (!args.environment || m.environment_id === args.environment))
  console.log(`meter                          aggregation    raw recount (events)              buckets (events)`)
  for (const a of await auditMeters(platform.ctx.ch, meters, from, to)) {
    if (!a.same) differences++
    console.log(
      `${a.meter.id.padEnd(30)} ${a.meter.aggregation.type.padEnd(14)} ${`${a.raw.value} (${a.raw.events})`.padEnd(33)} ${a.buckets.value} (${a.buckets.events})${a.same ? '' : '   DIFFERENT'}`,
    )
  }
  console.log(differences ? `${differences} meter(s) differ` : `${meters.length} meter(s): buckets equal the raw recount`)
} finally {
  await platform.stop()
}
process.exit(differences ? 1 : 0)
