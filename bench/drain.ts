// Stop with a backlog: sends BACKLOG events (default 1,000,000) as fast as ingest accepts them
// into the platform started like `npm run up` (its own stack, data directory and ports), runs
// `npm run down` at once, and prints how long the stop took and what the spool kept; then
// `npm run up` again and prints how long until the usage API counts every event, and the count.
// Usage: npm run bench:drain   (env: BACKLOG=1000000 CONCURRENCY=8 BATCH=1000)
// It prints numbers; it asserts nothing.
import { createLocalStack } from '../test/support/local-stack.js'
import { startBurst } from '../test/support/burst.js'

const BACKLOG = Number(process.env.BACKLOG ?? 1_000_000)
const stack = createLocalStack()
try {
  const first = await stack.up()
  const { apiKey } = stack.demo()
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: JSON.stringify(body) })
    return res.json()
  }
  const meter = await post('/v1/meters', { name: 'backlog', event_name: 'backlog', aggregation: { type: 'COUNT' } })
  const t0 = Date.now()
  const burst = startBurst({ url: stack.url, apiKey, eventName: 'backlog', total: BACKLOG, batch: Number(process.env.BATCH ?? 1000), concurrency: Number(process.env.CONCURRENCY ?? 8), idPrefix: 'backlog' })
  await burst.done
  const acceptedMs = Date.now() - t0
  const down = await stack.down()
  const up = await stack.up()
  const t1 = Date.now()
  let counted = 0
  while (counted < BACKLOG && Date.now() - t1 < 600_000) {
    const u = await post(`/v1/meters/${meter.id}/usage`, { start_time: '2000-01-01T00:00:00Z', end_time: '2100-01-01T00:00:00Z' })
    counted = Number(u.event_count ?? 0)
    if (counted < BACKLOG) await new Promise((r) => setTimeout(r, 500))
  }
  console.log(`
first npm run up: ${first.ms} ms
${BACKLOG} events accepted (202, in the spool) in ${acceptedMs} ms
npm run down right after: ${down.ms} ms
${down.output.trim()}
npm run up: ${up.ms} ms to a serving API; every event counted ${Date.now() - t1} ms later: ${counted} of ${BACKLOG}
`)
} finally {
  await stack.destroy()
}
