// The ingest worker (INGEST_THREAD=worker): ingest's own HTTP routes, spool, forwarder and
// producer on their own event loop. Requests arrive authenticated from the main thread
// (forwarding-routes.ts) and run through the same routes as on the main thread, by inject, so
// every answer (202, validation errors, 503) is the one the main thread would give.
import { parentPort, workerData } from 'node:worker_threads'
import type { FastifyRequest } from 'fastify'
import type { AuthContext } from '../../billing-api/http/request-auth.js'
import { systemClock } from '../../platform/clock.js'
import type { Config } from '../../platform/config.js'
import { createHttpServer } from '../../platform/http.js'
import { configureMetricLabels } from '../../platform/metric-labels.js'
import { registry } from '../../platform/metrics.js'
import { errorText, replyTo } from '../../platform/worker-thread.js'
import { registerIngest } from '../app.js'
import { openIngest, type OpenIngest } from '../start.js'
import { SAFE_BEFORE, type ForwardedReply, type ForwardedRequest, type FromWorker, type ToWorker } from './protocol.js'

const { config, shared } = workerData as { config: Config; shared: BigInt64Array }
const port = parentPort!
const post = (m: FromWorker) => port.postMessage(m)
const log = (msg: string, err?: unknown) => post({ type: 'log', msg, err: errorText(err) })

/** The request id header: the auth context of a forwarded request waits here for its route. */
const REQUEST_ID = 'x-meterline-forwarded'
/** Headers of the worker's answer the main thread's server sets itself. */
const HOP_HEADERS = new Set(['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding'])

configureMetricLabels(config.metricLabels)
const closers: (() => Promise<unknown>)[] = []
const app = createHttpServer({ service: 'ingest', logLevel: config.logLevel, ...config.http })
const pending = new Map<string, AuthContext>()
let nextRequest = 1
const auth = {
  // Only the main thread reaches this server (it listens on no socket), and only with a request it authenticated.
  hook: async (request: FastifyRequest) => {
    const ctx = pending.get(String(request.headers[REQUEST_ID]))
    if (!ctx) throw new Error('a forwarded request without its authentication')
    request.auth = ctx
  },
  invalidate() {},
  errorStatuses: [] as number[],
}

async function forward(req: ForwardedRequest): Promise<ForwardedReply> {
  const id = String(nextRequest++)
  pending.set(id, req.auth)
  try {
    const res = await app.inject({
      method: 'POST',
      url: req.url,
      headers: { [REQUEST_ID]: id, ...(req.contentType ? { 'content-type': req.contentType } : {}) },
      payload: req.body ? Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength) : undefined,
    })
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = String(value)
    }
    return { status: res.statusCode, headers, payload: res.payload }
  } finally {
    pending.delete(id)
  }
}

async function stop(): Promise<void> {
  clearInterval(safeTimer)
  await app.close().catch(() => undefined)
  for (const close of closers.reverse()) await close().catch((err: unknown) => log('stopping ingest failed', err))
}

let ingest: OpenIngest | undefined
// The spool's safe instant, for the main thread's live counters: a value read late is older, never wrong.
const publishSafe = () => {
  if (ingest?.spool) Atomics.store(shared, SAFE_BEFORE, BigInt(ingest.spool.spool.safeBefore()))
}
const safeTimer = setInterval(publishSafe, 10)

port.on('message', (m: ToWorker) => {
  const reply = (run: () => unknown) => replyTo(post, m.id, run)
  switch (m.op) {
    case 'request': reply(() => forward(m.req)); break
    case 'unforwarded': reply(() => ingest?.spool?.spool.oldestUnforwardedMs() ?? 0); break
    case 'drain': reply(async () => {
      const drained = ingest?.spool ? await ingest.spool.drain(m.ms) : { batches: 0, events: 0, bytes: 0, ms: 0 }
      publishSafe()
      return drained
    }); break
    // Only ingest's own series: HTTP requests are counted where they arrive, process-wide ones on the main thread.
    case 'metrics': reply(async () => (await registry.getMetricsAsJSON()).filter((x) => x.name.startsWith('meterline_') && !x.name.startsWith('meterline_http_'))); break
    case 'stop': reply(stop); break
  }
})

try {
  ingest = await openIngest(config, { clock: systemClock, log }, closers)
  await registerIngest(app, ingest.deps, auth, config.ingestBodyLimitBytes)
  await app.ready()
  publishSafe()
  post({ type: 'ready' })
} catch (err) {
  log('the ingest thread could not start', err)
  post({ type: 'failed', error: err instanceof Error ? err.message : String(err) })
}
