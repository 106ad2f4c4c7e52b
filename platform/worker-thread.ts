// A service part on its own worker thread: starts it through scripts/thread-entry.mjs, waits for
// its `ready`, matches replies to calls, and reports an exit nobody asked for. The messages of
// both sides' protocols carry `type` (worker -> main) and `id` (calls and their replies).
import { Worker, type TransferListItem } from 'node:worker_threads'

type Reply = { type: 'reply'; id: number; ok: true; value: unknown } | { type: 'reply'; id: number; ok: false; error: string }
type Lifecycle = { type: 'ready' } | { type: 'failed'; error: string }

export interface WorkerThread<C> {
  call: <T>(msg: C) => Promise<T>
  /** asks the worker to stop (`stopCall`), then ends the thread */
  stop: () => Promise<void>
}

export async function startWorkerThread<C extends object, M extends { type: string }>(opts: {
  /** for messages: "the <name> thread" */
  name: string
  /** the worker's module */
  entry: URL
  workerData: Record<string, unknown>
  transferList?: TransferListItem[]
  /** every message other than ready, failed and replies */
  onMessage: (m: M) => void
  stopCall: C
  log: (msg: string, err?: unknown) => void
  /** the worker died on its own */
  onExit: (code: number) => void
  /** after the thread exited, asked or not */
  onGone?: () => void
}): Promise<WorkerThread<C>> {
  const worker = new Worker(new URL('../scripts/thread-entry.mjs', import.meta.url), {
    workerData: { ...opts.workerData, entry: opts.entry.href, threadName: opts.name },
    transferList: opts.transferList,
  })
  let next = 1
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let stopping = false
  let started: { resolve: () => void; reject: (e: Error) => void }
  const ready = new Promise<void>((resolve, reject) => (started = { resolve, reject }))
  worker.on('message', (m: M | Reply | Lifecycle) => {
    if (m.type === 'ready') started.resolve()
    else if (m.type === 'failed') started.reject(new Error(`the ${opts.name} thread could not start: ${(m as Lifecycle & { error: string }).error}`))
    else if (m.type === 'reply') {
      const r = m as Reply
      const w = waiting.get(r.id)
      waiting.delete(r.id)
      if (r.ok) w?.resolve(r.value)
      else w?.reject(new Error(r.error))
    } else opts.onMessage(m as M)
  })
  worker.on('error', (err) => {
    opts.log(`the ${opts.name} thread failed`, err)
    started.reject(err)
  })
  worker.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`the ${opts.name} thread exited`))
    waiting.clear()
    started.reject(new Error(`the ${opts.name} thread exited (${code})`))
    opts.onGone?.()
    if (!stopping) opts.onExit(code)
  })
  const call = <T>(msg: C): Promise<T> => {
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
    call,
    async stop() {
      stopping = true
      await call(opts.stopCall).catch((err: unknown) => opts.log(`stopping the ${opts.name} thread failed`, err))
      await worker.terminate()
    },
  }
}

/** The worker side's answer to a call: the value, or the error's message. */
export function replyTo(post: (m: Reply) => void, id: number, run: () => unknown): void {
  Promise.resolve().then(run).then(
    (value) => post({ type: 'reply', id, ok: true, value }),
    (err: unknown) => post({ type: 'reply', id, ok: false, error: err instanceof Error ? err.message : String(err) }),
  )
}

/** An error as a log message can carry it across threads. */
export function errorText(err: unknown): string | undefined {
  return err === undefined ? undefined : err instanceof Error ? (err.stack ?? err.message) : JSON.stringify(err)
}
