// The main thread's handle on the aggregator worker (scripts/aggregator-worker.ts): serves its
// ClickHouse statements with the process's engine, hands its committed writes to the live
// counters' publisher, its logs to the process log and its metrics to /metrics, and answers the
// admin API's consumer calls through it.
import { MessageChannel, Worker } from 'node:worker_threads'
import type { AggregatorControl, AggregatorView } from '../billing-api/admin/aggregators.js'
import type { ClickHouseTransport } from '../clickhouse/client.js'
import { serveTransport } from '../clickhouse/thread-transport.js'
import type { Config } from '../platform/config.js'
import type { CommittedWrite, CommittedWriteListener } from '../schemas/committed-write.js'

type Call = { op: 'views' } | { op: 'setConsumers'; n: number } | { op: 'metrics' } | { op: 'stop' }
export type ToWorker = Call & { id: number }
export type FromWorker =
  | { type: 'ready' }
  | { type: 'failed'; error: string }
  | { type: 'write'; w: CommittedWrite }
  | { type: 'committed'; bytes: number }
  | { type: 'log'; msg: string; err?: string }
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: string }

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
  /** the worker died on its own: the process cannot count events any more */
  onExit: (code: number) => void
}): Promise<AggregatorThread> {
  const channel = new MessageChannel()
  serveTransport(channel.port1, opts.transport)
  const worker = new Worker(new URL('./thread-entry.mjs', import.meta.url), {
    workerData: { entry: new URL('./aggregator-worker.ts', import.meta.url).href, config: opts.config, chPort: channel.port2, gate: opts.onCommitted !== undefined },
    transferList: [channel.port2],
  })
  let next = 1
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let stopping = false
  let started: { resolve: () => void; reject: (e: Error) => void }
  const ready = new Promise<void>((resolve, reject) => (started = { resolve, reject }))
  worker.on('message', (m: FromWorker) => {
    switch (m.type) {
      case 'write': opts.onCommittedWrite(m.w); break
      case 'committed': opts.onCommitted?.({ bytes: m.bytes }); break
      case 'log': opts.log(m.msg, m.err); break
      case 'ready': started.resolve(); break
      case 'failed': started.reject(new Error(`the aggregator thread could not start: ${m.error}`)); break
      case 'reply': {
        const w = waiting.get(m.id)
        waiting.delete(m.id)
        if (m.ok) w?.resolve(m.value)
        else w?.reject(new Error(m.error))
      }
    }
  })
  worker.on('error', (err) => {
    opts.log('the aggregator thread failed', err)
    started.reject(err)
  })
  worker.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error('the aggregator thread exited'))
    waiting.clear()
    started.reject(new Error(`the aggregator thread exited (${code})`))
    channel.port1.close()
    if (!stopping) opts.onExit(code)
  })
  const call = <T>(msg: Call): Promise<T> => {
    const id = next++
    return new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject })
      worker.postMessage({ ...msg, id })
    })
  }
  try {
    await ready
  } catch (err) {
    stopping = true
    await worker.terminate()
    throw err
  }
  return {
    control: {
      consumers: () => call<AggregatorView[]>({ op: 'views' }),
      setConsumers: (n) => call<AggregatorView[]>({ op: 'setConsumers', n }),
    },
    metrics: () => call<unknown[]>({ op: 'metrics' }),
    async stop() {
      stopping = true
      await call({ op: 'stop' }).catch((err: unknown) => opts.log('stopping the aggregator thread failed', err))
      await worker.terminate()
    },
  }
}
