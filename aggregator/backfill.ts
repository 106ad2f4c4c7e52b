// Fills a meter that appeared after its events arrived, from events_raw through the same pure
// row builder as the live path. Only events whose key is in event_keys are taken: those are
// the ones the live path finished; any other raw row belongs to a write that failed and will
// be replayed by the live path, with this meter already active.
import type { ClickHouse } from '../clickhouse/client.js'
import { deleteMeterRows } from '../clickhouse/queries/meter-activations.js'
import { lookupEventKeys } from '../clickhouse/queries/event-keys.js'
import { rawEventsPage } from '../clickhouse/queries/events.js'
import { aggregatorMeterRowsWritten } from '../platform/metrics.js'
import type { IngestBatch, UsageEvent } from '../schemas/events.js'
import { bucketRow, eventKey, indexMeters, meterEventRow, meterHits } from './meter-rows.js'
import type { MeterDefinition } from '../schemas/meters.js'

const PAGE = 20_000

export async function backfillMeter(
  ch: ClickHouse, meter: MeterDefinition, clearFirst: boolean, afterPage?: (meterId: string) => Promise<void> | void,
): Promise<number> {
  if (clearFirst) await deleteMeterRows(ch, meter.id)
  const index = indexMeters([meter])
  const scope = { tenantId: meter.tenant_id, environmentId: meter.environment_id, eventName: meter.event_name }
  let after = ''
  let written = 0
  for (;;) {
    const page = await rawEventsPage(ch, scope, after, PAGE)
    if (page.length === 0) return written
    const keys = page.map((r) => eventKey(meter.tenant_id, meter.environment_id, r.event_id))
    const present = await lookupEventKeys(ch, keys.map((k) => k.key))
    const events: unknown[][] = []
    const buckets: unknown[][] = []
    const skipped: Record<string, number> = {}
    page.forEach((r, i) => {
      if (present.get(keys[i].key) !== keys[i].check) return
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
        buckets.push(bucketRow(batch, e, hit, matched!.props))
      }
    })
    await ch.insertCompact('meter_events', events)
    await ch.insertCompact('meter_buckets', buckets)
    aggregatorMeterRowsWritten.inc(events.length)
    await afterPage?.(meter.id)
    written += events.length
    after = page[page.length - 1].event_id
    if (page.length < PAGE) return written
  }
}
