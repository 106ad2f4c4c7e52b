// Keeps the live catalog (catalog.ts) in step with Postgres, in every process:
// - LISTEN meterline_live: the triggers of migrations/0001_live_access.sql notify every change
//   to a cached table after its commit, whoever wrote it (another API process, a job, psql);
// - the ORM's flushes in this process, at once, so a request that changed a grant and the check
//   that follows it in the same process never race the notification.
// When the listening connection drops, notifications may be lost: everything is dropped and the
// connection opened again (1 s, then doubling to 30 s).
import type { EventSubscriber, FlushEventArgs, MikroORM } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import type { LiveCatalog } from './catalog.js'

const CUSTOMER_TABLES = new Set(['customers', 'subscriptions', 'wallets', 'wallet_transactions'])
const SCOPE_TABLES = new Set(['entitlements', 'features', 'meters'])

export function invalidate(catalog: LiveCatalog, table: string, scope: Scope, customerId: string | null): void {
  if (SCOPE_TABLES.has(table)) catalog.dropScope(scope)
  else if (table === 'addon_associations') catalog.dropCustomer(scope, null)
  else if (CUSTOMER_TABLES.has(table)) catalog.dropCustomer(scope, customerId)
}

class FlushInvalidation implements EventSubscriber {
  constructor(private readonly catalog: LiveCatalog) {}

  afterFlush(args: FlushEventArgs): void {
    for (const cs of args.uow.getChangeSets()) {
      const table = cs.meta.tableName
      if (!SCOPE_TABLES.has(table) && !CUSTOMER_TABLES.has(table) && table !== 'addon_associations') continue
      const row = cs.entity as { id?: string; tenant_id?: string; environment_id?: string; customer_id?: string }
      if (!row.tenant_id || !row.environment_id) continue
      invalidate(this.catalog, table, { tenant_id: row.tenant_id, environment_id: row.environment_id }, table === 'customers' ? row.id ?? null : row.customer_id ?? null)
    }
  }
}

interface PgClient {
  query(sql: string): Promise<unknown>
  on(event: 'notification', fn: (m: { channel: string; payload?: string }) => void): void
  on(event: 'error' | 'end', fn: (err?: Error) => void): void
  end(): Promise<void>
}

export interface Invalidation {
  stop(): Promise<void>
  ready: Promise<void>
}

/** a failed LISTEN is an error once it failed this often in a row (before: a warning, e.g. a slow start) */
const FAILURES_BEFORE_ERROR = 3

export function startInvalidation(
  orm: MikroORM, catalog: LiveCatalog, onLost: () => void, log: (msg: string, err?: unknown) => void, warn: (msg: string, err?: unknown) => void = log,
): Invalidation {
  orm.em.getEventManager().registerSubscriber(new FlushInvalidation(catalog))
  // A connection of its own, outside the pool: it stays open and LISTENs.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- knex's client is untyped
  const knexClient: { acquireRawConnection(): Promise<PgClient>; destroyRawConnection(c: PgClient): Promise<void> } = orm.em.getConnection().getKnex().client
  let client: PgClient | undefined
  let stopped = false
  let delay = 1000
  let failures = 0
  const failed = (err: unknown) => {
    failures++
    ;(failures >= FAILURES_BEFORE_ERROR ? log : warn)(`live cache: LISTEN failed (${failures} in a row; caches off meanwhile); retrying`, err)
    setTimeout(() => void retry(), delay).unref()
  }
  const connect = async (): Promise<void> => {
    const c = await knexClient.acquireRawConnection()
    c.on('notification', (m) => {
      if (m.channel !== 'meterline_live' || !m.payload) return
      const [table, tenant_id, environment_id, customer] = m.payload.split('|')
      invalidate(catalog, table, { tenant_id, environment_id }, customer || null)
    })
    const lost = (err?: Error) => {
      if (client !== c) return
      client = undefined
      catalog.caching = false
      catalog.dropAll()
      onLost()
      if (stopped) return
      log('live cache: the LISTEN connection to Postgres was lost; caches dropped, reconnecting', err)
      setTimeout(() => void retry(), delay).unref()
    }
    c.on('error', lost)
    c.on('end', lost)
    await c.query('LISTEN meterline_live')
    client = c
    delay = 1000
    failures = 0
    // Changes made while no connection listened were not heard.
    catalog.dropAll()
    catalog.caching = true
  }
  const retry = async () => {
    if (stopped) return
    try {
      await connect()
    } catch (err) {
      delay = Math.min(delay * 2, 30_000)
      failed(err)
    }
  }
  const ready = connect().catch(failed)
  return {
    ready,
    async stop() {
      stopped = true
      const c = client
      client = undefined
      if (c) await knexClient.destroyRawConnection(c).catch(() => undefined)
    },
  }
}
