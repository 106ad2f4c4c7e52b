// The online exactness audit: while the platform runs, a few sampled closed minutes (a meter,
// a customer, one minute 2 to 30 minutes old) are recounted from the raw events through the
// meter rules and compared with the buckets, as `usage:verify` does for a whole tenant with the
// platform stopped. Only events whose dedup keys are written take part (a write in flight has
// its raw rows before its keys); a difference is confirmed by a second read a few seconds later
// before it counts as a mismatch (meterline_usage_audit_samples_total{result="mismatch"}, alert
// MeterlineUsageAuditMismatch).
import { Decimal } from 'decimal.js'
import type pg from 'pg'
import type { ClickHouse } from '../clickhouse/client.js'
import { countedBy, keyName, storedKeyOf } from '../clickhouse/queries/dedup-keys.js'
import { queryMeterUsage, type UsageAggregation } from '../clickhouse/queries/meter-usage.js'
import { usageAuditSamples } from '../platform/business-metrics.js'
import type { MeterDefinition } from '../schemas/meters.js'
import type { MeterCache } from './meter-cache.js'
import { indexMeters, meterHits } from './meter-rows.js'

const AUDITED = new Set(['SUM', 'COUNT', 'MAX'])

interface Sample {
  meter: MeterDefinition
  customer: string
  minute: number
}

export interface AuditResult {
  sample: { meterId: string; customer: string; minute: string }
  raw: { value: string; events: number }
  buckets: { value: string; events: number }
  same: boolean
}

export class OnlineAudit {
  constructor(
    private readonly ch: ClickHouse,
    private readonly pool: pg.Pool,
    private readonly store: string,
    private readonly meters: MeterCache,
    private readonly log: (msg: string) => void,
  ) {}

  /** Audits up to `samples` random closed minutes; returns what it compared. */
  async run(samples: number, now = Date.now()): Promise<AuditResult[]> {
    const picked = await this.pick(samples, now)
    const out: AuditResult[] = []
    for (const s of picked) {
      let r = await this.compare(s)
      if (!r.same) {
        await new Promise((x) => setTimeout(x, 5000))
        r = await this.compare(s)
      }
      usageAuditSamples.inc({ result: r.same ? 'match' : 'mismatch' })
      if (!r.same) this.log(`usage audit mismatch: meter ${s.meter.id}, customer ${s.customer}, minute ${r.sample.minute}: raw ${JSON.stringify(r.raw)} != buckets ${JSON.stringify(r.buckets)}`)
      out.push(r)
    }
    return out
  }

  private async pick(n: number, now: number): Promise<Sample[]> {
    const defs = new Map(this.meters.all.filter((m) => AUDITED.has(m.aggregation.type) && !m.aggregation.expression).map((m) => [m.id, m]))
    if (defs.size === 0) return []
    // A meter whose backfill has not finished lacks its earlier events by design: not sampled.
    const { rows: done } = await this.pool.query<{ meter_id: string }>(
      `SELECT meter_id FROM meter_backfills WHERE store = $1 AND state = 'done' AND meter_id = ANY($2)`, [this.store, [...defs.keys()]],
    )
    const ids = done.map((r) => r.meter_id)
    if (ids.length === 0) return []
    const from = Math.floor((now - 30 * 60_000) / 60_000) * 60
    const to = Math.floor((now - 2 * 60_000) / 60_000) * 60
    const rows = await this.ch.query<{ meter_id: string; customer: string; minute: string }>(
      `SELECT meter_id, external_customer_id AS customer, toString(toUnixTimestamp(bucket_start)) AS minute
         FROM ${this.ch.table('meter_buckets')}
        WHERE bucket_start >= toDateTime(${from}) AND bucket_start < toDateTime(${to}) AND meter_id IN (${ids.map((id) => `'${id.replace(/'/g, '')}'`).join(',')})
        GROUP BY meter_id, customer, minute ORDER BY rand() LIMIT ${Math.max(1, Math.floor(n))}`,
    )
    return rows.map((r) => ({ meter: defs.get(r.meter_id)!, customer: r.customer, minute: Number(r.minute) }))
  }

  async compare(s: Sample): Promise<AuditResult> {
    const { meter } = s
    const start = new Date(s.minute * 1000)
    const end = new Date(s.minute * 1000 + 60_000)
    const raw = await this.ch.query<{ event_id: string; properties: string; ts: string; received: string }>(
      `SELECT event_id, any(properties) AS properties, toString(toUnixTimestamp64Milli(timestamp)) AS ts,
              toString(toUnixTimestamp64Milli(any(ingested_at))) AS received
         FROM ${this.ch.table('events_raw')}
        WHERE tenant_id = {t:String} AND environment_id = {e:String} AND event_name = {n:String} AND external_customer_id = {c:String}
          AND timestamp >= fromUnixTimestamp64Milli(${start.getTime()}) AND timestamp < fromUnixTimestamp64Milli(${end.getTime()})
        GROUP BY event_id, timestamp`,
      { t: meter.tenant_id, e: meter.environment_id, n: meter.event_name, c: s.customer },
    )
    const keys = raw.map((r) => storedKeyOf(meter.tenant_id, meter.environment_id, r.event_id, Number(r.ts), Number(r.received)))
    const counted = await countedBy(this.ch, keys)
    const index = indexMeters([meter])
    let value = new Decimal(0)
    let max: Decimal | undefined
    let events = 0
    raw.forEach((r, i) => {
      if (!counted.has(keyName(keys[i].d))) return
      const e = { event_id: r.event_id, event_name: meter.event_name, external_customer_id: s.customer, customer_id: null, timestamp: Number(r.ts), source: null, properties: r.properties }
      for (const hit of meterHits(index, meter.tenant_id, meter.environment_id, e, {})?.hits ?? []) {
        events++
        value = value.plus(hit.value)
        max = max === undefined || new Decimal(hit.value).gt(max) ? new Decimal(hit.value) : max
      }
    })
    const recount = meter.aggregation.type === 'COUNT' ? new Decimal(events) : meter.aggregation.type === 'MAX' ? (max ?? new Decimal(0)) : value
    const [bucket] = await queryMeterUsage(this.ch, {
      tenantId: meter.tenant_id, environmentId: meter.environment_id, meterId: meter.id, externalCustomerId: s.customer,
      aggregation: meter.aggregation.type as UsageAggregation, start, end,
    })
    const b = { value: bucket?.value ?? '0', events: Number(bucket?.event_count ?? 0) }
    return {
      sample: { meterId: meter.id, customer: s.customer, minute: start.toISOString() },
      raw: { value: recount.toFixed(), events },
      buckets: b,
      same: new Decimal(b.value).eq(recount) && b.events === events,
    }
  }
}
