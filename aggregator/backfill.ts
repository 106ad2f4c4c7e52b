// Meters created after their events: counted once per database. Every writer records a cut for
// a new meter in each shard it holds (write-stage.ts): from that write on, the live path counts
// the meter. One backfill, run by whoever holds its lease (meter_backfills), counts the events
// each shard counted before its cut: the events whose dedup key was written by a write before
// the cut. Its bucket rows carry origin 'bf:<token>'; a holder that crashed loses the lease
// when it expires, and the next one deletes that token's rows (only those) and starts again.
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { ClickHouse } from '../clickhouse/client.js'
import { countedBy, keyName, storedKeyOf } from '../clickhouse/queries/dedup-keys.js'
import { cursorAfter, RAW_START, rawEventsPage, scopesWithEvents } from '../clickhouse/queries/events.js'
import { aggregatorBackfillFailures, aggregatorMeterRowsWritten } from '../platform/metrics.js'
import type { IngestBatch, UsageEvent } from '../schemas/events.js'
import type { MeterDefinition } from '../schemas/meters.js'
import { SHARDS } from '../schemas/shards.js'
import { BucketFolder } from './fold.js'
import type { MeterCache } from './meter-cache.js'
import { bucketRow, indexMeters, meterEventRow, meterHits } from './meter-rows.js'
import { transaction } from './pg-transaction.js'

const PAGE = 20_000
const LEASE_SECONDS = 30

export class LeaseLostError extends Error {}

export interface BackfillHooks {
  /** after each page a backfill writes (fault injection) */
  afterBackfillPage?: (meterId: string) => Promise<void> | void
  /** events read per page (default 20,000; tests use small pages) */
  backfillPageSize?: number
}

export class Backfills {
  private running: Promise<void> | undefined

  constructor(
    private readonly ch: ClickHouse,
    private readonly pool: pg.Pool,
    private readonly store: string,
    private readonly holder: string,
    private readonly meters: MeterCache,
    private readonly log: (msg: string, err?: unknown) => void,
    private readonly hooks: BackfillHooks = {},
  ) {}

  /** Runs due backfills, one at a time, beside the live writes; a tick while one runs is a no-op. */
  tick(): Promise<void> {
    this.running ??= this.runDue().finally(() => {
      this.running = undefined
    })
    return this.running
  }

  /** Resolves when no backfill is pending for the given meters (tests, bench). */
  async pending(meterIds: string[]): Promise<string[]> {
    const { rows } = await this.pool.query<{ meter_id: string }>(
      `SELECT meter_id FROM meter_backfills WHERE store = $2 AND meter_id = ANY($1) AND state <> 'done'`, [meterIds, this.store],
    )
    const known = await this.pool.query<{ meter_id: string }>('SELECT meter_id FROM meter_backfills WHERE store = $2 AND meter_id = ANY($1)', [meterIds, this.store])
    const have = new Set(known.rows.map((r) => r.meter_id))
    return [...rows.map((r) => r.meter_id), ...meterIds.filter((id) => !have.has(id))]
  }

  private async runDue(): Promise<void> {
    const defs = this.meters.all
    if (defs.length === 0) return
    await this.pool.query(
      `INSERT INTO meter_backfills (store, meter_id) SELECT $2, unnest($1::text[]) ON CONFLICT DO NOTHING`, [defs.map((m) => m.id), this.store],
    )
    // Newest first: a meter just created is not kept waiting behind older ones.
    const { rows } = await this.pool.query<{ meter_id: string; cuts: number }>(
      `SELECT b.meter_id, (SELECT count(*)::int FROM meter_cuts c WHERE c.store = b.store AND c.meter_id = b.meter_id) AS cuts
         FROM meter_backfills b
        WHERE b.store = $2 AND b.state = 'pending' AND b.meter_id = ANY($1) AND (b.lease_until IS NULL OR b.lease_until < now())
        ORDER BY b.updated_at DESC`,
      [defs.map((m) => m.id), this.store],
    )
    const byId = new Map(defs.map((m) => [m.id, m]))
    const due = rows.map((r) => ({ meter: byId.get(r.meter_id)!, cut: r.cuts >= SHARDS })).filter((r) => r.meter)
    // A meter cut in every shard whose event name has no raw event in this database has nothing
    // to backfill (every write before its cuts is complete, raw rows included): done at once.
    const cut = due.filter((d) => d.cut).map((d) => d.meter)
    if (cut.length) {
      const withEvents = await scopesWithEvents(this.ch, cut.map((m) => ({ tenantId: m.tenant_id, environmentId: m.environment_id, eventName: m.event_name })))
      const empty = cut.filter((m) => !withEvents.has(`${m.tenant_id}\u0000${m.environment_id}\u0000${m.event_name}`)).map((m) => m.id)
      if (empty.length) {
        await this.pool.query(
          `UPDATE meter_backfills SET state = 'done', updated_at = now()
            WHERE store = $2 AND meter_id = ANY($1) AND state = 'pending' AND (lease_until IS NULL OR lease_until < now())`,
          [empty, this.store],
        )
      }
      for (const m of cut) if (withEvents.has(`${m.tenant_id}\u0000${m.environment_id}\u0000${m.event_name}`)) await this.run(m)
    }
  }

  private async run(meter: MeterDefinition): Promise<void> {
    const token = randomUUID()
    const { rows } = await this.pool.query<{ old: string }>(
      `UPDATE meter_backfills b SET token = $2, holder = $3, lease_until = now() + interval '${LEASE_SECONDS} seconds', attempts = b.attempts + 1, updated_at = now()
         FROM (SELECT token AS old FROM meter_backfills WHERE store = $4 AND meter_id = $1 FOR UPDATE) o
        WHERE b.store = $4 AND b.meter_id = $1 AND b.state = 'pending' AND (b.lease_until IS NULL OR b.lease_until < now())
        RETURNING o.old`,
      [meter.id, token, this.holder, this.store],
    )
    if (rows.length === 0) return // another holder has it
    try {
      const cuts = await this.pool.query<{ shard: number; epoch: string; seq: string }>(
        'SELECT shard, epoch::text, seq::text FROM meter_cuts WHERE store = $2 AND meter_id = $1', [meter.id, this.store],
      )
      if (cuts.rows.length < SHARDS) {
        // Some shard has no writer that saw the meter yet: wait for every cut.
        await this.pool.query(`UPDATE meter_backfills SET lease_until = NULL WHERE store = $3 AND meter_id = $1 AND token = $2`, [meter.id, token, this.store])
        return
      }
      const cut = new Map(cuts.rows.map((r) => [r.shard, { epoch: BigInt(r.epoch), seq: BigInt(r.seq) }]))
      // The rows of every earlier attempt go before this one writes any: not only the last
      // attempt's, since an attempt can fail after it took the token and before it deleted its
      // predecessor's rows (which then had nobody left to delete them).
      if (rows[0].old) {
        await this.holding(meter.id, token, () =>
          this.ch.command(
            `ALTER TABLE ${this.ch.table('meter_buckets')} DELETE WHERE meter_id = {m:String} AND startsWith(origin, 'bf:') AND origin != {o:String}`,
            { m: meter.id, o: `bf:${token}` }, { mutations_sync: '2' },
          ),
        )
      }
      const events = await this.fill(meter, token, cut)
      // Every row is written: a failure to record that (Postgres busy or restarting) is retried
      // here rather than by a new attempt, which would delete and rewrite them all.
      await retried(() => this.holding(meter.id, token, async (c) => {
        await c.query(
          `UPDATE meter_backfills SET state = 'done', lease_until = NULL, events = $3, updated_at = now() WHERE store = $4 AND meter_id = $1 AND token = $2`,
          [meter.id, token, events, this.store],
        )
      }))
      this.log(`meter ${meter.id}: backfill done (${events} events counted before its cuts)`)
    } catch (err) {
      aggregatorBackfillFailures.inc()
      this.log(`backfill of meter ${meter.id} failed; the next lease holder retries it`, err)
      // Let the next tick retry soon (a lost lease is someone else's now).
      await this.pool.query(
        `UPDATE meter_backfills SET lease_until = now() + interval '1 second' WHERE store = $3 AND meter_id = $1 AND token = $2`, [meter.id, token, this.store],
      ).catch(() => undefined)
    }
  }

  private async fill(meter: MeterDefinition, token: string, cut: Map<number, { epoch: bigint; seq: bigint }>): Promise<number> {
    const index = indexMeters([meter])
    const origin = `bf:${token}`
    const scope = { tenantId: meter.tenant_id, environmentId: meter.environment_id, eventName: meter.event_name }
    let after = RAW_START
    let counted = 0
    for (;;) {
      const size = this.hooks.backfillPageSize ?? PAGE
      const page = await rawEventsPage(this.ch, scope, after, size)
      if (page.length === 0) return counted
      const keys = page.map((r) => storedKeyOf(meter.tenant_id, meter.environment_id, r.event_id, Number(r.timestamp_ms), Number(r.ingested_at_ms)))
      const writes = await countedBy(this.ch, keys)
      const events: unknown[][] = []
      const folder = new BucketFolder()
      const skipped: Record<string, number> = {}
      page.forEach((r, i) => {
        const by = writes.get(keyName(keys[i].d))
        const c = cut.get(keys[i].shard)!
        // Not counted yet (its write will count the meter), or counted at or after the cut.
        if (!by || by.epoch > c.epoch || (by.epoch === c.epoch && by.seq >= c.seq)) return
        const batch: IngestBatch = {
          batch_id: '', tenant_id: meter.tenant_id, environment_id: meter.environment_id, ingested_at: Number(r.ingested_at_ms), events: [],
        }
        const e: UsageEvent = {
          event_id: r.event_id, event_name: r.event_name, external_customer_id: r.external_customer_id,
          customer_id: r.customer_id || null, timestamp: Number(r.timestamp_ms), source: r.source || null, properties: r.properties,
        }
        const matched = meterHits(index, meter.tenant_id, meter.environment_id, e, skipped)
        for (const hit of matched?.hits ?? []) {
          events.push(meterEventRow(batch, e, hit, matched!.props))
          const row = bucketRow(batch, e, hit, matched!.props)
          row[row.length - 1] = origin
          folder.add(row)
          counted++
        }
      })
      const queryId = `meterline-backfill-${randomUUID()}`
      await this.holding(meter.id, token, async (c) => {
        await Promise.all([
          this.ch.insertCompact('meter_events', events),
          // A page that failed for its client may still land (a server completing it): the lease
          // is held until it can land no more, so the next attempt's delete comes after it.
          this.ch.insertCompact('meter_buckets', folder.rows(), undefined, queryId).catch(async (err: unknown) => {
            await this.ch.settle(queryId, this.log)
            throw err
          }),
        ])
        await c.query(
          `UPDATE meter_backfills SET lease_until = now() + interval '${LEASE_SECONDS} seconds', updated_at = now() WHERE store = $2 AND meter_id = $1`, [meter.id, this.store],
        )
      })
      aggregatorMeterRowsWritten.inc(events.length)
      await this.hooks.afterBackfillPage?.(meter.id)
      after = cursorAfter(page[page.length - 1])
      if (page.length < size) return counted
    }
  }

  /** Runs `fn` holding the lease row (FOR SHARE): a taker waits for it, and a lost lease refuses it. */
  private async holding(meterId: string, token: string, fn: (c: pg.PoolClient) => Promise<unknown>): Promise<void> {
    await transaction(this.pool, async (c) => {
      const { rows } = await c.query<{ token: string }>('SELECT token FROM meter_backfills WHERE store = $2 AND meter_id = $1 FOR SHARE', [meterId, this.store])
      if (rows[0]?.token !== token) throw new LeaseLostError(`the backfill lease of meter ${meterId} moved to another holder`)
      await fn(c)
    })
  }
}

async function retried(fn: () => Promise<void>, attempts = 5): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      return await fn()
    } catch (err) {
      if (err instanceof LeaseLostError || i >= attempts) throw err
      await new Promise((r) => setTimeout(r, 500 * i))
    }
  }
}
