// Operator CLI: runs one scheduled job now, through the same BullMQ queue the scheduler uses,
// and prints how many items it processed. A running scheduler (or this process) executes it.
//   node --import tsx scripts/run-job.ts subscription-billing [tenant_id]
import { loadConfigOrExit } from '../platform/config.js'
import { startPlatform } from './composition-root.js'
import { JOBS } from '../scheduler/jobs.js'

const [name, tenantId] = process.argv.slice(2)
if (!name || !JOBS[name]) {
  console.error(`usage: run-job.ts <${Object.keys(JOBS).join('|')}> [tenant_id]`)
  process.exit(2)
}
const platform = await startPlatform(loadConfigOrExit(), { services: ['scheduler'], schedule: false, relay: false, listen: false })
try {
  const items = await platform.scheduler!.trigger(name, tenantId ? { tenant_id: tenantId } : {}, 10 * 60_000)
  console.log(`${name}: ${items} item(s)`)
} finally {
  await platform.stop()
}
