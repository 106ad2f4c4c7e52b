// The main thread's handle on the ingest worker (worker.ts): forwards authenticated requests,
// reads the spool's safe instant from shared memory (the live check's usage_as_of) and asks
// the worker for what the billing watermark, /metrics and shutdown need.
import type { Config } from '../../platform/config.js'
import { startWorkerThread } from '../../platform/worker-thread.js'
import type { SpoolHandle } from '../spool/ingest-spool.js'
import { SAFE_BEFORE, SHARED_SLOTS, type Drained, type ForwardedReply, type ForwardedRequest, type FromWorker, type ToWorker } from './protocol.js'

type Call = ToWorker extends infer T ? (T extends { id: number } ? Omit<T, 'id'> : never) : never

/** The spool's safe instant is read from shared memory without waiting for the worker; the rest is asked. */
export interface IngestThread extends SpoolHandle {
  forward(req: ForwardedRequest): Promise<ForwardedReply>
  metrics(): Promise<unknown[]>
  stop(): Promise<void>
}

export async function startIngestThread(opts: {
  config: Config
  log: (msg: string, err?: unknown) => void
  /** the worker died on its own: the process cannot accept events any more */
  onExit: (code: number) => void
}): Promise<IngestThread> {
  const shared = new BigInt64Array(new SharedArrayBuffer(8 * SHARED_SLOTS))
  const thread = await startWorkerThread<Call, FromWorker>({
    name: 'ingest',
    entry: new URL('./worker.ts', import.meta.url),
    workerData: { config: opts.config, shared },
    onMessage: (m) => {
      if (m.type === 'log') opts.log(m.msg, m.err)
    },
    stopCall: { op: 'stop' },
    log: opts.log,
    onExit: opts.onExit,
  })
  const self: IngestThread = {
    forward: (req) => thread.call<ForwardedReply>({ op: 'request', req }),
    safeBefore() {
      const ms = Number(Atomics.load(shared, SAFE_BEFORE))
      return ms > 0 ? ms : null
    },
    oldestUnforwardedMs: () => thread.call<number>({ op: 'unforwarded' }),
    async drain(ms) {
      self.lastDrain = await thread.call<Drained>({ op: 'drain', ms })
      return self.lastDrain
    },
    left: () => self.lastDrain,
    metrics: () => thread.call<unknown[]>({ op: 'metrics' }),
    stop: thread.stop,
  }
  return self
}
