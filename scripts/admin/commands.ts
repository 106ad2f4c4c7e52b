// What each CLI command does against the admin API; resolves with the process exit code.
import type { Command } from './args.js'
import type { AdminClient, JobView } from './client.js'
import { billingRunLine, describeJob, formatAggregators, formatJobs, formatStatus } from './format.js'
import { waitForJob } from './wait-for-job.js'

/** The last line of a followed job run; resolves with the exit code. */
export function reportRun(done: JobView, print: (line: string) => void): number {
  if (done.state === 'failed') {
    print(`${done.name} failed: ${done.failed_reason ?? 'unknown reason'} (retry: npm run admin -- jobs retry ${done.id})`)
    return 1
  }
  print(`${done.name}: ${JSON.stringify(done.return_value)} item(s)`)
  return 0
}

export async function runCommand(cmd: Command, client: AdminClient, print: (line: string) => void = console.log): Promise<number> {
  switch (cmd.kind) {
    case 'jobs-list':
      print(formatJobs(await client.jobs()))
      return 0
    case 'jobs-run': {
      const queued = await client.runJob(cmd.name, cmd.tenantId)
      if (!cmd.wait) {
        print(`queued ${queued.name} as scheduler job ${queued.id}; follow it with npm run admin -- jobs show ${queued.id}`)
        return 0
      }
      // a billing run also prints its progress record (done / total, rate, ETA, failures) when it moves
      const runId = cmd.name === 'subscription-billing' ? `${cmd.name}:${queued.id}:${Date.parse(queued.created_at)}` : undefined
      let last = ''
      const progress = async () => {
        const run = runId ? await client.billingRun(runId) : undefined
        const line = run ? billingRunLine(run) : ''
        if (line && line !== last) print(line)
        last = line || last
      }
      const done = await waitForJob(async (j) => {
        await progress()
        return client.job(j.queue, j.id)
      }, queued, { print })
      await progress()
      return reportRun(done, print)
    }
    case 'jobs-status':
      print(formatStatus(cmd.queue ? [await client.queue(cmd.queue, cmd.failures)] : await client.queues(cmd.failures)))
      return 0
    case 'jobs-show':
      print(describeJob(await client.job(cmd.queue, cmd.id)))
      return 0
    case 'jobs-retry':
      print(describeJob(await client.retry(cmd.queue, cmd.id)))
      return 0
    case 'jobs-retry-all': {
      const { retried } = await client.retryFailed(cmd.queue)
      print(`${cmd.queue}: ${retried} failed job(s) moved back to waiting`)
      return 0
    }
    case 'aggregators-list':
      print(formatAggregators(await client.aggregators()))
      return 0
    case 'aggregators-set':
      print(formatAggregators(await client.setAggregators(cmd.n)))
      return 0
    case 'tenant-create': {
      const t = await client.createTenant(cmd.name, cmd.keyEnvironment)
      print(JSON.stringify(t, null, 2))
      return 0
    }
  }
}
