// A ClickHouse transport that injects the failures of a remote server around a real one (tests,
// the chaos run): the connection reset before the server saw a statement, the reset after the
// server committed it, the client's timeout while the server goes on and completes it later,
// and an answer cut short (with or without the error text a server appends mid-stream under
// status 200). Each rule fires for the statements it matches, a given number of times.
import type { ClickHouseTransport, QueryParams, Settings } from './client.js'

export type Fault =
  /** refused before the server saw it: nothing happens */
  | 'reset-before'
  /** the server committed it, then the connection broke: the caller sees an error */
  | 'reset-after-commit'
  /** the caller times out; the server completes the statement `delayMs` later */
  | 'timeout-while-completing'
  /** a text answer cut at half its length */
  | 'truncate'
  /** a text answer cut after the last whole line in its first half (no partial line shows it) */
  | 'truncate-at-line'
  /** a text answer cut at half its length, followed by the exception text a server sends mid-stream */
  | 'error-mid-stream'

export type Op = 'command' | 'queryJson' | 'queryText' | 'insert'

export interface FaultRule {
  op: Op
  /** the insert's table, or a statement's text */
  match: RegExp
  fault: Fault
  /** how many matching statements fail (default 1) */
  times?: number
  /** timeout-while-completing: how long after the caller's error the statement completes */
  delayMs?: number
}

export class ConnectionReset extends Error {
  readonly code = 'ECONNRESET'
  constructor(what: string) {
    super(`socket hang up: the connection was reset (${what}; injected)`)
  }
}

export class FaultTransport implements ClickHouseTransport {
  private readonly rules: (FaultRule & { left: number })[] = []
  /** statements still running after their caller was told they failed, by query id */
  private readonly running = new Map<string, Promise<unknown>>()
  /** faults that fired, in order (tests assert that the case they meant happened) */
  readonly fired: { op: Op; fault: Fault; target: string }[] = []
  private anonymous = 0

  constructor(private readonly inner: ClickHouseTransport) {}

  inject(rule: FaultRule): this {
    this.rules.push({ ...rule, left: rule.times ?? 1 })
    return this
  }

  clear(): void {
    this.rules.length = 0
  }

  private take(op: Op, target: string): FaultRule | undefined {
    const rule = this.rules.find((r) => r.op === op && r.left > 0 && r.match.test(target))
    if (!rule) return undefined
    rule.left--
    this.fired.push({ op, fault: rule.fault, target })
    return rule
  }

  /** Runs `run` under the matched rule's fault (the statement kinds that change nothing textual). */
  private async apply<T>(rule: FaultRule | undefined, what: string, queryId: string | undefined, run: () => Promise<T>): Promise<T> {
    if (!rule) return run()
    switch (rule.fault) {
      case 'reset-before':
        throw new ConnectionReset(`before the server saw ${what}`)
      case 'reset-after-commit':
        await run()
        throw new ConnectionReset(`after the server committed ${what}`)
      case 'timeout-while-completing': {
        const id = queryId ?? `anonymous-${++this.anonymous}`
        const late = new Promise((r) => setTimeout(r, rule.delayMs ?? 300)).then(run)
        this.running.set(id, late.finally(() => this.running.delete(id)).catch(() => undefined))
        throw Object.assign(new Error(`Timeout error: ${what} (injected; the server completes it later)`), { code: 'ETIMEDOUT' })
      }
      default:
        return run()
    }
  }

  command(query: string, params?: QueryParams, settings?: Settings): Promise<void> {
    return this.apply(this.take('command', query), 'a command', undefined, () => this.inner.command(query, params, settings))
  }

  queryJson(query: string, params?: QueryParams, settings?: Settings): Promise<unknown[]> {
    return this.apply(this.take('queryJson', query), 'a query', undefined, () => this.inner.queryJson(query, params, settings))
  }

  async queryText(query: string, settings?: Settings): Promise<string> {
    const rule = this.take('queryText', query)
    if (rule?.fault === 'truncate' || rule?.fault === 'truncate-at-line' || rule?.fault === 'error-mid-stream') {
      const text = await this.inner.queryText(query, settings)
      const half = Math.floor(text.length / 2)
      if (rule.fault === 'truncate-at-line') return text.slice(0, text.lastIndexOf('\n', half) + 1)
      const cut = text.slice(0, half)
      return rule.fault === 'truncate'
        ? cut
        : `${cut}Code: 241. DB::Exception: Memory limit (total) exceeded: would use 9.31 GiB (attempt to allocate chunk of 4194304 bytes), maximum: 9.31 GiB. (MEMORY_LIMIT_EXCEEDED) (version 25.8.1.1)\n`
    }
    return this.apply(rule, 'a query', undefined, () => this.inner.queryText(query, settings))
  }

  insert(table: string, body: Uint8Array, settings?: Settings, queryId?: string): Promise<void> {
    return this.apply(this.take('insert', table), `an insert into ${table}`, queryId, () => this.inner.insert(table, body, settings, queryId))
  }

  async settle(queryId: string): Promise<void> {
    await this.running.get(queryId)
    await this.inner.settle(queryId)
  }

  ping(): Promise<boolean> {
    return this.inner.ping()
  }

  close(): Promise<void> {
    return this.inner.close()
  }
}
