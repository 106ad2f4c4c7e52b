// A meter created after its events arrived is filled from events_raw through the same
// pure row builder as the live path. Safe to repeat: meter_usage deduplicates on event_id.
import type { ClickHouse } from '../clickhouse/client.js'
import { rawEventsPage } from '../clickhouse/queries/events.js'
import { aggregatorMeterRowsWritten } from '../platform/metrics.js'
import { buildRows, indexMeters, type BuiltRows, type MeterDefinition } from './meter-rows.js'

const PAGE = 20_000

export async function backfillMeter(ch: ClickHouse, meter: MeterDefinition): Promise<number> {
  const index = indexMeters([meter])
  let after = ''
  let written = 0
  for (;;) {
    const page = await rawEventsPage(ch, { tenantId: meter.tenant_id, environmentId: meter.environment_id, eventName: meter.event_name }, after, PAGE)
    if (page.length === 0) return written
    const out: BuiltRows = { raw: [], meter: [], skipped: {} }
    // Rows keep their original ingested_at, so a backfilled row and a live row for the same
    // event are identical and merge to one.
    for (const r of page) {
      buildRows(
        {
          batch_id: '', tenant_id: meter.tenant_id, environment_id: meter.environment_id, ingested_at: Number(r.ingested_at_ms),
          events: [{
            event_id: r.event_id, event_name: r.event_name, external_customer_id: r.external_customer_id,
            customer_id: r.customer_id || null, timestamp: Number(r.timestamp_ms), source: r.source || null, properties: r.properties,
          }],
        },
        index,
        out,
        false,
      )
    }
    await ch.insertCompact('meter_usage', out.meter)
    aggregatorMeterRowsWritten.inc(out.meter.length)
    written += out.meter.length
    after = page[page.length - 1].event_id
    if (page.length < PAGE) return written
  }
}
