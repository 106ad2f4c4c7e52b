// How long a restart takes: the platform started the way `npm run up` starts it (its own Postgres,
// Redis and broker in a temp directory), then killed with kill -9 and started again, `--runs`
// times: the time to a serving API (/health answers) and until an event sent as soon as it serves
// is counted (the aggregators hold their partitions again). The topology is PLATFORM_TOPOLOGY's
// (default: processes). Prints every run, the load average before it, and the medians.
//
//   npm run bench:restart -- [--runs 5]
import os from 'node:os'
import { parseArgs } from 'node:util'
import { createLocalStack } from '../test/support/local-stack.js'

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '5' } } })
const runs = Number(args.runs)
const topology = process.env.PLATFORM_TOPOLOGY ?? 'processes'
const stack = createLocalStack()
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

try {
  const first = await stack.up()
  const { apiKey } = stack.demo()
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: JSON.stringify(body) })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
  const meter = await call('/v1/meters', { name: 'restart', event_name: 'restart', aggregation: { type: 'COUNT' } })
  if (meter.status !== 201) throw new Error(`meter: ${JSON.stringify(meter.body)}`)
  const counted = async () => {
    const u = await call(`/v1/meters/${String(meter.body.id)}/usage`, { start_time: '2000-01-01T00:00:00Z', end_time: '2100-01-01T00:00:00Z' }).catch(() => undefined)
    return u?.status === 200 ? Number(u.body.event_count ?? 0) : -1
  }
  console.log(`topology ${topology}; first npm run up (initdb, migrations) ${first.ms} ms`)
  console.log('| run | load before | serving API (ms) | an event counted (ms) |')
  console.log('|---|---|---|---|')
  const serving: number[] = []
  const counting: number[] = []
  for (let i = 1; i <= runs; i++) {
    await sleep(5000) // heartbeats, the group settled
    const load = os.loadavg()[0]
    const before = await counted()
    await stack.killApp()
    const t0 = Date.now()
    await stack.up()
    serving.push(Date.now() - t0)
    for (let sent = false; ; await sleep(100)) {
      if (!sent) sent = (await call('/v1/events', { event_name: 'restart', external_customer_id: 'c1', event_id: `restart-${i}` }).catch(() => ({ status: 0 }))).status === 202
      if (sent && (await counted()) > before) break
      if (Date.now() - t0 > 300_000) throw new Error('no event counted 300 s after the restart')
    }
    counting.push(Date.now() - t0)
    console.log(`| ${i} | ${load.toFixed(2)} | ${serving.at(-1)} | ${counting.at(-1)} |`)
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  console.log(`median: serving API ${median(serving)} ms, an event counted ${median(counting)} ms (${runs} runs, ${topology})`)
} finally {
  await stack.destroy()
}
