// ClickHouse statements of another thread, run by the thread that owns the engine: chDB binds its
// embedded engine to one session per process, so an aggregator in a worker thread sends its
// statements here over a MessagePort. Insert bodies travel as transferred bytes (no copy).
import type { MessagePort } from 'node:worker_threads'
import type { ClickHouseTransport, QueryParams, Settings } from './client.js'

type Op = 'command' | 'queryJson' | 'queryText' | 'insert' | 'settle' | 'ping'
interface Request { id: number; op: Op; args: unknown[] }
interface WireError { message: string; name: string; code?: string; type?: string }
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError }

/** The owning thread: runs what arrives on `port` with its own transport. */
export function serveTransport(port: MessagePort, transport: ClickHouseTransport): void {
  port.on('message', (m: Request) => {
    let run: Promise<unknown>
    try {
      const a = m.args
      switch (m.op) {
        case 'command': run = transport.command(a[0] as string, a[1] as QueryParams | undefined, a[2] as Settings | undefined); break
        case 'queryJson': run = transport.queryJson(a[0] as string, a[1] as QueryParams | undefined, a[2] as Settings | undefined); break
        case 'queryText': run = transport.queryText(a[0] as string, a[1] as Settings | undefined); break
        case 'insert': run = transport.insert(a[0] as string, a[1] as Uint8Array, a[2] as Settings | undefined, a[3] as string | undefined); break
        case 'settle': run = transport.settle(a[0] as string); break
        case 'ping': run = transport.ping(); break
      }
    } catch (err) {
      run = Promise.reject(err instanceof Error ? err : new Error(String(err)))
    }
    run.then(
      (value) => port.postMessage({ id: m.id, ok: true, value } satisfies Reply),
      (err: unknown) => port.postMessage({ id: m.id, ok: false, error: wireError(err) } satisfies Reply),
    )
  })
}

/** The worker's side: every statement is a message to the owning thread. */
export class PortTransport implements ClickHouseTransport {
  private next = 1
  private closed = false
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()

  constructor(private readonly port: MessagePort) {
    port.on('message', (r: Reply) => {
      const w = this.waiting.get(r.id)
      if (!w) return
      this.waiting.delete(r.id)
      if (r.ok) w.resolve(r.value)
      else w.reject(Object.assign(new Error(r.error.message), r.error))
    })
  }

  private call(op: Op, args: unknown[], transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the ClickHouse port is closed'))
    const id = this.next++
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      this.port.postMessage({ id, op, args } satisfies Request, transfer)
    })
  }

  async command(query: string, params?: QueryParams, settings?: Settings): Promise<void> {
    await this.call('command', [query, params, settings])
  }

  async queryJson(query: string, params?: QueryParams, settings?: Settings): Promise<unknown[]> {
    return (await this.call('queryJson', [query, params, settings])) as unknown[]
  }

  async queryText(query: string, settings?: Settings): Promise<string> {
    return (await this.call('queryText', [query, settings])) as string
  }

  async insert(table: string, body: Uint8Array, settings?: Settings, queryId?: string): Promise<void> {
    // A small Buffer may sit in Node's shared pool: only a buffer of its own is handed over.
    const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer
    const bytes = own ? body : new Uint8Array(body)
    await this.call('insert', [table, bytes, settings, queryId], [bytes.buffer as ArrayBuffer])
  }

  async settle(queryId: string): Promise<void> {
    await this.call('settle', [queryId])
  }

  async ping(): Promise<boolean> {
    return (await this.call('ping', [])) as boolean
  }

  async close(): Promise<void> {
    this.closed = true
    for (const w of this.waiting.values()) w.reject(new Error('the ClickHouse port is closed'))
    this.waiting.clear()
    this.port.close()
  }
}

function wireError(err: unknown): WireError {
  const e = err instanceof Error ? err : new Error(String(err))
  const extra = e as Error & { code?: unknown; type?: unknown }
  return {
    message: e.message, name: e.name,
    ...(typeof extra.code === 'string' ? { code: extra.code } : {}),
    ...(typeof extra.type === 'string' ? { type: extra.type } : {}),
  }
}
