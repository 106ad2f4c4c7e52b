// `npm run chaos -- --seconds S --seed N`: a seeded random schedule of faults (kill -9 of the
// platform, broker restarts, npm run down/up, a second aggregator joining and leaving, meters
// created mid-stream, Postgres and Redis stopped for a few seconds) while a client streams events
// with retries, then an audit per event id: every acknowledged event counted exactly once, every
// other one at most once, and `npm run usage:verify` clean. Exits 1 on any double or loss.
// Runs against the stack of the environment (METERLINE_DATA_DIR, PORT, PG_PORT, REDIS_PORT,
// KAFKA_PORT), starting it with `npm run up` when it is not serving; ends with `npm run down`.
//   --seconds S      how long the client streams and faults are injected (default 120)
//   --seed N         the schedule's seed (default: random, printed)
//   --pace X         scales the pauses between faults (default 1: 2-12 s)
//   --rate R         new events per second (default 100)
//   --concurrency C  client requests in flight (default 3)
//   --settle-ms M    how long counts must be stable before the audit (default 10000)
//   --faults F       stop after F faults (the stream ends 3 s after the last one)
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { runChaos } from './chaos/run.js'
import { formatSummary } from './chaos/summary.js'
import { PROJECT_ROOT } from '../platform/config.js'

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '120' },
    seed: { type: 'string' },
    pace: { type: 'string', default: '1' },
    rate: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '3' },
    'settle-ms': { type: 'string', default: '10000' },
    faults: { type: 'string' },
  },
})
const num = (name: string, v: string | undefined) => {
  const n = Number(v)
  if (!Number.isFinite(n) || n < 0) {
    console.error(`--${name} must be a non-negative number, got ${v}`)
    process.exit(2)
  }
  return n
}
const seed = args.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Math.floor(num('seed', args.seed))
const env = { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' }

const summary = await runChaos({
  seconds: num('seconds', args.seconds), seed, env, pace: num('pace', args.pace), rate: num('rate', args.rate),
  concurrency: Math.max(1, Math.floor(num('concurrency', args.concurrency))), settleMs: num('settle-ms', args['settle-ms']),
  maxFaults: args.faults === undefined ? undefined : num('faults', args.faults),
})
console.log(formatSummary(summary))
const file = join(process.env.METERLINE_DATA_DIR ?? join(PROJECT_ROOT, '.data'), `${summary.runId}.json`)
writeFileSync(file, JSON.stringify(summary, null, 2))
console.log(`full summary (every doubled and lost id): ${file}`)
process.exit(summary.ok && summary.crashes.length === 0 ? 0 : 1)
