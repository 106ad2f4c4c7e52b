// Polls a job until it has finished, printing a line when its state changes and a heartbeat
// while it stays the same, so a long billing run shows it is alive.
import type { JobView } from './client.js'
import { progressLine } from './format.js'

export interface WaitOptions {
  intervalMs?: number
  heartbeatMs?: number
  timeoutMs?: number
  print?: (line: string) => void
}

/** `read` fetches the job again: over the admin API, or from the queue in-process (job:run offline). */
export async function waitForJob(read: (job: JobView) => Promise<JobView>, first: JobView, opts: WaitOptions = {}): Promise<JobView> {
  const { intervalMs = 250, heartbeatMs = 5000, timeoutMs = 30 * 60_000, print = (l: string) => console.log(l) } = opts
  const t0 = Date.now()
  let job = first
  let lastKey = ''
  let lastPrint = 0
  for (;;) {
    const key = `${job.state}/${job.attempts_made}`
    const now = Date.now()
    if (key !== lastKey || now - lastPrint >= heartbeatMs) {
      print(progressLine(job, now - t0))
      lastKey = key
      lastPrint = now
    }
    if (job.state === 'completed' || job.state === 'failed') return job
    if (now - t0 > timeoutMs) throw new Error(`job ${job.id} did not finish in ${timeoutMs / 1000} s (still ${job.state}); check it with npm run admin -- jobs show ${job.id}`)
    await new Promise((r) => setTimeout(r, intervalMs))
    job = await read(job)
  }
}
