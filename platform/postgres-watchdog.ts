// Deadlines for every Postgres statement (issue #24). Server-side, each connection carries
// statement_timeout, lock_timeout and idle_in_transaction_session_timeout. Those cannot help when
// Postgres accepts connections but never answers (a frozen host, SIGSTOP): the kernel completes
// the TCP handshake, and nothing else happens. A client-side timeout per query cannot tell that
// from a long statement, and cutting a statement off while leaving its connection in the pool
// would let the next user run inside a transaction that never ended. So the watchdog asks
// Postgres itself: when a query has gone unanswered for PG_NO_ANSWER_MS, it probes with a fresh
// connection and `SELECT 1`. A probe that answers (even with an error such as "too many
// connections") means Postgres is alive and the long query continues. A probe that times out
// means Postgres is hung: every connection with a query in flight is closed (its queries fail,
// its transaction dies with the socket, the pool replaces it), and queries fail at once until a
// probe answers again. The errors say "Connection terminated", which platform/unavailable.ts maps
// to 503 service_unavailable.
import pg from 'pg'

export interface PostgresDeadlines {
  /** how long a request waits for a pooled connection */
  acquireTimeoutMs: number
  /** deadline of one connect attempt */
  connectTimeoutMs: number
  statementTimeoutMs: number
  lockTimeoutMs: number
  idleInTransactionTimeoutMs: number
  /** a query unanswered this long triggers a probe; 0: no watchdog */
  noAnswerMs: number
  probeTimeoutMs: number
}

export const DEFAULT_POSTGRES_DEADLINES: PostgresDeadlines = {
  acquireTimeoutMs: 1500, connectTimeoutMs: 1000, statementTimeoutMs: 30_000, lockTimeoutMs: 5000,
  idleInTransactionTimeoutMs: 60_000, noAnswerMs: 700, probeTimeoutMs: 500,
}

/** node-postgres connection options that give every statement of the connection server-side deadlines. */
export function sessionDeadlines(d: PostgresDeadlines) {
  return {
    connectionTimeoutMillis: d.connectTimeoutMs,
    statement_timeout: d.statementTimeoutMs,
    lock_timeout: d.lockTimeoutMs,
    idle_in_transaction_session_timeout: d.idleInTransactionTimeoutMs,
    keepAlive: true,
  }
}

/**
 * Resolves after `ms` of time in which this event loop ran. A loop blocked by this process's own
 * work (a billing batch's pricing, a burst of ingest) cannot read an answer that has arrived, so
 * a wall-clock deadline would declare a live Postgres hung and close its connections under load.
 * Time is counted in steps of STEP_MS; a step that fires late counts as at most two.
 */
const STEP_MS = 25
export function loopTime(ms: number): { elapsed: Promise<'timeout'>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined
  let left = ms
  let last = Date.now()
  const elapsed = new Promise<'timeout'>((resolve) => {
    const step = () => {
      const now = Date.now()
      left -= Math.min(now - last, 2 * STEP_MS)
      last = now
      if (left <= 0) resolve('timeout')
      else timer = setTimeout(step, STEP_MS)
    }
    timer = setTimeout(step, STEP_MS)
  })
  return { elapsed, cancel: () => clearTimeout(timer) }
}

type Query = (...args: unknown[]) => unknown
interface Watched {
  /** start times of the queries sent or queued, oldest first (a connection answers in order) */
  started: number[]
}

/** The state the watchdog reports, for logs and tests. */
export type PostgresHealth = 'answering' | 'hung'

export class PostgresWatchdog {
  private readonly clients = new Map<pg.Client, Watched>()
  private readonly timer: NodeJS.Timeout
  private probing = false
  private lastAnswerAt = 0
  private state: PostgresHealth = 'answering'
  private stopped = false
  /** the probe's own connection while one runs (closed by stop) */
  private probeClient: pg.Client | undefined

  constructor(
    private readonly databaseUrl: string,
    private readonly d: Pick<PostgresDeadlines, 'noAnswerMs' | 'probeTimeoutMs'>,
    private readonly log: (msg: string) => void = () => {},
  ) {
    this.timer = setInterval(() => this.tick(), Math.max(25, Math.floor(d.noAnswerMs / 4)))
    this.timer.unref()
  }

  get health(): PostgresHealth {
    return this.state
  }

  /** Throws while Postgres is hung, so a new connection fails at once instead of after the connect timeout. */
  assertAnswering(): void {
    if (this.state === 'hung') throw new Error('Connection terminated: Postgres is not answering (watchdog); no new connection is opened until a probe answers')
  }

  /** Watches every query of this connection (called once per new pooled connection). */
  guard(client: pg.Client): void {
    const watched: Watched = { started: [] }
    this.clients.set(client, watched)
    client.once('end', () => this.clients.delete(client))
    const query = client.query.bind(client) as Query
    const replacement: Query = (...args) => {
      // Hung: fail at once rather than queue behind a query that will not be answered.
      if (this.state === 'hung') this.close(client)
      const at = Date.now()
      watched.started.push(at)
      let settled = false
      const done = () => {
        if (settled) return
        settled = true
        const i = watched.started.indexOf(at)
        if (i >= 0) watched.started.splice(i, 1)
      }
      const cb = args.length > 0 ? args[args.length - 1] : undefined
      if (typeof cb === 'function') {
        args[args.length - 1] = (...r: unknown[]) => {
          done()
          return (cb as Query)(...r)
        }
        return query(...args)
      }
      const submittable = args[0] as { submit?: unknown; once?: (event: string, fn: () => void) => void } | undefined
      const result = query(...args)
      if (result && typeof (result as Promise<unknown>).then === 'function') (result as Promise<unknown>).then(done, done)
      else if (submittable && typeof submittable.submit === 'function' && typeof submittable.once === 'function') {
        submittable.once('end', done)
        submittable.once('error', done)
      } else done()
      return result
    }
    ;(client as unknown as { query: Query }).query = replacement
  }

  stop(): void {
    this.stopped = true
    clearInterval(this.timer)
    if (this.probeClient) this.close(this.probeClient)
  }

  private tick(): void {
    if (this.probing) return
    const now = Date.now()
    const stale = [...this.clients.values()].some((w) => w.started.length > 0 && now - w.started[0]! >= this.d.noAnswerMs)
    if (!stale && this.state === 'answering') return
    // Postgres answered a probe recently: a long statement is just long.
    if (this.state === 'answering' && now - this.lastAnswerAt < this.d.noAnswerMs) return
    this.probing = true
    const probeStart = Date.now()
    void this.probe().then((answered) => {
      this.probing = false
      if (answered) {
        this.lastAnswerAt = Date.now()
        if (this.state === 'hung') this.log('Postgres answers again')
        this.state = 'answering'
        return
      }
      if (this.state === 'answering') this.log(`Postgres did not answer a probe within ${this.d.probeTimeoutMs} ms: closing connections with queries in flight`)
      this.state = 'hung'
      for (const [client, w] of this.clients) {
        if (w.started.length > 0 && w.started[0]! <= probeStart) this.close(client)
      }
    })
  }

  /** true when Postgres answered in time, also with an error (it is alive); false on a timeout. */
  private async probe(): Promise<boolean> {
    // The client's own connect deadline is wall time, far longer: the decision is loopTime's below.
    const client = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: this.d.probeTimeoutMs * 20 })
    client.on('error', () => undefined)
    this.probeClient = client
    const deadline = loopTime(this.d.probeTimeoutMs)
    const work = client.connect().then(() => client.query('SELECT 1')).then(
      () => 'answered' as const,
      (err: Error) => (/timeout/i.test(err.message) ? 'timeout' as const : 'answered' as const),
    )
    const outcome = await Promise.race([work, deadline.elapsed])
    deadline.cancel()
    this.probeClient = undefined
    if (outcome === 'answered' && !this.stopped) await client.end().catch(() => undefined)
    else this.close(client)
    return outcome === 'answered'
  }

  private close(client: pg.Client): void {
    const stream = (client as unknown as { connection?: { stream?: { destroy(err?: Error): void } } }).connection?.stream
    stream?.destroy(new Error(`Connection terminated: Postgres did not answer within ${this.d.noAnswerMs + this.d.probeTimeoutMs} ms (watchdog)`))
  }
}
