// The aggregator in a worker thread (AGGREGATOR_THREAD=worker): its consumers, Avro decoding and
// write stage run on their own event loop, so the API's loop never waits for a write's
// JavaScript, and the second core works on writes while the first serves requests. Its
// ClickHouse statements go to the process's engine through the main thread
// (clickhouse/thread-transport.ts); committed writes, logs and metrics go back as messages
// (scripts/aggregator-thread.ts is the other side).
import { parentPort, workerData, type MessagePort } from 'node:worker_threads'
import { ShardFence } from '../aggregator/shard-fence.js'
import { openOrm } from '../billing-api/database.js'
import { postgresMeterSource } from '../billing-api/meters/index.js'
import { ClickHouse } from '../clickhouse/client.js'
import { PortTransport } from '../clickhouse/thread-transport.js'
import type { Config } from '../platform/config.js'
import { configureMetricLabels } from '../platform/metric-labels.js'
import { registry } from '../platform/metrics.js'
import { PostgresWatchdog } from '../platform/postgres-watchdog.js'
import { errorText, replyTo } from '../platform/worker-thread.js'
import type { ToWorker, FromWorker } from './aggregator-thread.js'
import { consumerSet } from './aggregator-consumers.js'

const { config, chPort, gate } = workerData as { config: Config; chPort: MessagePort; gate: boolean }
const port = parentPort!
const post = (m: FromWorker | { type: 'ready' } | { type: 'failed'; error: string }) => port.postMessage(m)
const log = (msg: string, err?: unknown) => post({ type: 'log', msg, err: errorText(err) })
const warn = (msg: string, err?: unknown) => post({ type: 'log', msg, err: errorText(err), warn: true })

configureMetricLabels(config.metricLabels)
const ch = ClickHouse.over(new PortTransport(chPort), config.clickhouse)
// The thread's own pools, watched like the main thread's: a hung Postgres fails a write (it is
// replayed) instead of holding the shards' fence without bound.
const watchdog = config.postgres.noAnswerMs > 0 ? new PostgresWatchdog(config.databaseUrl, config.postgres, (msg) => log(`postgres watchdog: ${msg}`)) : undefined
// No connection at start: the main thread has just reached Postgres, and an outage now (a
// restart) must leave the writes to retry, not end the thread and with it the process.
const orm = await openOrm(config.databaseUrl, 2, config.postgres, watchdog, false)
const pg = ShardFence.pool(config.databaseUrl, 8, config.postgres, watchdog)
const meters = postgresMeterSource(orm)

const consumers = consumerSet({
  config, ch, meters, pg, log, warn,
  onCommittedWrite: (w) => post({ type: 'write', w }),
  onCommitted: gate ? (c) => post({ type: 'committed', bytes: c.bytes }) : undefined,
})

async function stop(): Promise<void> {
  await consumers.stop()
  await pg.end().catch(() => undefined)
  await orm.close().catch(() => undefined)
  watchdog?.stop()
  await ch.close().catch(() => undefined)
}

port.on('message', (m: ToWorker) => {
  const reply = (run: () => unknown) => replyTo((r) => port.postMessage(r), m.id, run)
  switch (m.op) {
    case 'views': reply(() => consumers.consumers()); break
    case 'setConsumers': reply(() => consumers.setConsumers(m.n)); break
    // Only the aggregator's own series: the process-wide ones (CPU, memory) come from the main thread.
    case 'metrics': reply(async () => (await registry.getMetricsAsJSON()).filter((x) => x.name.startsWith('meterline_'))); break
    case 'stop': reply(stop); break
  }
})

try {
  await consumers.setConsumers(config.aggregatorConsumers)
  post({ type: 'ready' })
} catch (err) {
  log('the aggregator thread could not start', err)
  post({ type: 'failed', error: err instanceof Error ? err.message : String(err) })
}
