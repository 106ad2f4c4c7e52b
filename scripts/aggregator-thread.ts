// The main thread's handle on the aggregator worker (scripts/aggregator-worker.ts): serves its
// ClickHouse statements with the process's engine, hands its committed writes to the live
// counters' publisher, its logs to the process log and its metrics to /metrics, and answers the
// admin API's consumer calls through it.
import { MessageChannel } from 'node:worker_threads'
import type { AggregatorControl, AggregatorView } from '../billing-api/admin/aggregators.js'
import type { ClickHouseTransport } from '../clickhouse/client.js'
import { serveTransport } from '../clickhouse/thread-transport.js'
import type { Config } from '../platform/config.js'
import { startWorkerThread } from '../platform/worker-thread.js'
import type { CommittedWrite, CommittedWriteListener } from '../schemas/committed-write.js'

type Call = { op: 'views' } | { op: 'setConsumers'; n: number } | { op: 'metrics' } | { op: 'stop' }
export type ToWorker = Call & { id: number }
export type FromWorker =
  | { type: 'write'; w: CommittedWrite }
  | { type: 'committed'; bytes: number }
  | { type: 'log'; msg: string; err?: string; warn?: boolean }

export interface AggregatorThread {
  control: AggregatorControl
  /** the worker's own metric series, for /metrics */
  metrics(): Promise<unknown[]>
  stop(): Promise<void>
}

export async function startAggregatorThread(opts: {
  config: Config
  transport: ClickHouseTransport
  onCommittedWrite: CommittedWriteListener
  onCommitted?: (c: { bytes: number }) => void
  log: (msg: string, err?: unknown) => void
  warn: (msg: string, err?: unknown) => void
  /** the worker died on its own: the process cannot count events any more */
  onExit: (code: number) => void
}): Promise<AggregatorThread> {
  const channel = new MessageChannel()
  serveTransport(channel.port1, opts.transport)
  const thread = await startWorkerThread<Call, FromWorker>({
    name: 'aggregator',
    entry: new URL('./aggregator-worker.ts', import.meta.url),
    workerData: { config: opts.config, chPort: channel.port2, gate: opts.onCommitted !== undefined },
    transferList: [channel.port2],
    onMessage: (m) => {
      switch (m.type) {
        case 'write': opts.onCommittedWrite(m.w); break
        case 'committed': opts.onCommitted?.({ bytes: m.bytes }); break
        case 'log': (m.warn ? opts.warn : opts.log)(m.msg, m.err); break
      }
    },
    stopCall: { op: 'stop' },
    log: opts.log,
    onExit: opts.onExit,
    onGone: () => channel.port1.close(),
  })
  const call = thread.call
  return {
    control: {
      consumers: () => call<AggregatorView[]>({ op: 'views' }),
      setConsumers: (n) => call<AggregatorView[]>({ op: 'setConsumers', n }),
    },
    metrics: () => call<unknown[]>({ op: 'metrics' }),
    stop: thread.stop,
  }
}
