// `npm run job:run -- <name> [tenant_id]`: runs one scheduled job now, prints its progress and
// how many items it processed. With the platform running it goes through the admin API (a
// running platform holds the embedded chDB directory); otherwise it runs the job in this process.
import type { Job } from 'bullmq'
import { jobView } from '../billing-api/admin/index.js'
import { loadConfig, ConfigError, type Config } from '../platform/config.js'
import { JOB_CATALOGUE, JOB_RUN_OPTIONS, SCHEDULER_QUEUE } from '../platform/job-catalogue.js'
import { AdminApiError, AdminClient } from './admin/client.js'
import { reportRun, runCommand } from './admin/commands.js'
import { adminTarget, platformState, type PlatformState } from './admin/target.js'
import { waitForJob } from './admin/wait-for-job.js'
import { startPlatform } from './composition-root.js'

const [name, tenantId] = process.argv.slice(2)
if (!name || !JOB_CATALOGUE[name]) {
  console.error(`usage: run-job.ts <${Object.keys(JOB_CATALOGUE).join('|')}> [tenant_id]`)
  process.exit(2)
}
const data = tenantId ? { tenant_id: tenantId } : {}
const target = adminTarget()
let state: PlatformState
try {
  state = await platformState(target)
} catch (err) {
  console.error((err as Error).message)
  process.exit(1)
}

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
  let config: Config
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
    const queue = platform.scheduler!.queue
    const read = async (id: string) => {
      const jobState = await queue.getJobState(id)
      return jobView(SCHEDULER_QUEUE, (await queue.getJob(id)) as Job, jobState)
    }
    const added = await queue.add(name, data, JOB_RUN_OPTIONS)
    const done = await waitForJob((j) => read(j.id), await read(String(added.id)), { timeoutMs: 60 * 60_000 })
    process.exitCode = reportRun(done, console.log)
  } finally {
    await platform.stop()
  }
}
