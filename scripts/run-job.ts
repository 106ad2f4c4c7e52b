// `npm run job:run -- <name> [tenant_id]`: runs one scheduled job now and prints how many items
// it processed. With the platform running it goes through the admin API (a running platform
// holds the embedded chDB directory); otherwise it runs the job in this process.
import { loadConfig, ConfigError } from '../platform/config.js'
import { AdminApiError, AdminClient } from './admin/client.js'
import { runCommand } from './admin/commands.js'
import { adminTarget, platformState } from './admin/target.js'
import { startPlatform } from './platform.js'
import { JOBS } from '../scheduler/jobs.js'

const [name, tenantId] = process.argv.slice(2)
if (!name || !JOBS[name]) {
  console.error(`usage: run-job.ts <${Object.keys(JOBS).join('|')}> [tenant_id]`)
  process.exit(2)
}
const target = adminTarget()
const state = await platformState(target)
if (state.running) {
  console.log(`the platform runs at ${target.url}: running ${name} through the admin API`)
  try {
    process.exitCode = await runCommand({ kind: 'jobs-run', name, tenantId, wait: true }, new AdminClient(target))
  } catch (err) {
    if (!(err instanceof AdminApiError)) throw err
    console.error(`admin API: ${err.message}`)
    process.exitCode = 1
  }
} else {
  console.log(`${state.why}: running ${name} in this process`)
  let config
  try {
    // The scheduler alone needs no broker.
    config = loadConfig(process.env, { kafkaBrokers: ['unused:9092'] })
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    console.error(`configuration error: ${err.message}`)
    process.exit(2)
  }
  const platform = await startPlatform(config, { services: ['scheduler'], schedule: false, relay: false, listen: false })
  try {
    const t0 = Date.now()
    const items = await platform.scheduler!.trigger(name, tenantId ? { tenant_id: tenantId } : {}, 10 * 60_000)
    console.log(`${name}: ${items} item(s) in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  } finally {
    await platform.stop()
  }
}
