// Writers fed directly (no Kafka) on one test file's engine, with the tenants, meters, events
// and pieces the write-path tests build them from, and the usage they read back.
import type { ClickHouse } from '../../clickhouse/client.js'
import { openWriter, type Writer, type WriterOptions } from '../../aggregator/writer.js'
import type { Piece } from '../../aggregator/write-stage.js'
import { queryMeterUsage } from '../../clickhouse/queries/meter-usage.js'
import type { IngestBatch, UsageEvent } from '../../schemas/events.js'
import type { MeterDefinition, MeterSource } from '../../schemas/meters.js'
import { SHARDS, eventShard } from '../../schemas/shards.js'
import { testPool } from './writer.js'

export const ALL_SHARDS = Array.from({ length: SHARDS }, (_, s) => s)

/** A meter source whose list the test changes (a writer's view of the published meters). */
export function meterSource(initial: MeterDefinition[]): MeterSource & { set(m: MeterDefinition[]): void } {
  let meters = initial
  let version = 0
  return { version: async () => String(version), load: async () => meters, set: (m) => ((meters = m), version++) }
}

/** `t0`: the first event's time (the events are 7 s apart). */
export function writeFixtures(ch: () => ClickHouse, t0: number, prefix: string) {
  let tenants = 0
  let offsets = 0n
  const piece = (tenant: string, batchId: string, evs: UsageEvent[], receivedAt: number): Piece => {
    const batch: IngestBatch = { batch_id: batchId, tenant_id: tenant, environment_id: 'env', ingested_at: receivedAt, events: evs }
    const at = offsets++
    return { stream: 'test', first: at, last: at, records: [{ offset: at, batch }] }
  }
  return {
    fixture: () => {
      const tenant = `${prefix}-${++tenants}`
      const sum: MeterDefinition = { id: `${tenant}-sum`, tenant_id: tenant, environment_id: 'env', event_name: 'call', filters: [], aggregation: { type: 'SUM', field: 'n' } }
      const cnt: MeterDefinition = { id: `${tenant}-count`, tenant_id: tenant, environment_id: 'env', event_name: 'call', filters: [], aggregation: { type: 'COUNT' } }
      return { tenant, sum, cnt }
    },

    writer: async (meters: MeterSource, shards: number[], opts: Partial<WriterOptions> = {}): Promise<Writer> => {
      const w = await openWriter({ ch: ch(), pg: testPool(), meters, meterRefreshMs: 0, log: () => {}, ...opts })
      w.shards.assign(shards)
      return w
    },

    events: (name: string, n: number, value = (i: number) => i + 1): UsageEvent[] => {
      return Array.from({ length: n }, (_, i) => ({
        event_id: `${name}-${i}`, event_name: 'call', external_customer_id: 'c1', customer_id: null,
        timestamp: t0 + i * 7_000, source: null, properties: JSON.stringify({ n: value(i) }),
      }))
    },

    /** A record of events that carry their own timestamps (received the millisecond before t0). */
    piece: (tenant: string, batchId: string, evs: UsageEvent[]): Piece => piece(tenant, batchId, evs, t0 - 1),

    /** A record of events sent without timestamps: ingest stamped each with its arrival, `at`. */
    stampedPiece: (tenant: string, batchId: string, evs: UsageEvent[], at: number): Piece =>
      piece(tenant, batchId, evs.map((e) => ({ ...e, timestamp: at })), at),

    /** Events of the given shards only (what the partitions of those shards would carry). */
    inShards: (tenant: string, shards: number[], evs: UsageEvent[]) => evs.filter((e) => shards.includes(eventShard(tenant, 'env', e.event_id))),

    usage: async (tenant: string, meter: MeterDefinition): Promise<string> => {
      const [row] = await queryMeterUsage(ch(), {
        tenantId: tenant, environmentId: 'env', meterId: meter.id, aggregation: meter.aggregation.type as 'SUM',
        start: new Date(t0 - 60_000), end: new Date(t0 + 86_400_000 * 3),
      })
      return row?.value ?? '0'
    },
  }
}
