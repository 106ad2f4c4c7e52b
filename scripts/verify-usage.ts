// Audit: recounts a tenant's usage from events_raw, meter by meter, through the aggregator's
// own meter rules, and compares it with the bucket read the API and invoices use. Exits 1 on
// any difference. Run it on a quiescent system (nothing in flight in the aggregator).
//   npm run usage:verify -- --tenant T [--environment E] [--from ISO] [--to ISO]
import { parseArgs } from 'node:util'
import { Decimal } from 'decimal.js'
import { loadConfigOrExit } from '../platform/config.js'
import { startPlatform } from './platform.js'
import { postgresMeterSource } from '../billing-api/meters/meter-definitions.js'
import { indexMeters, meterHits } from '../aggregator/meter-rows.js'
import { Recount } from '../aggregator/recount.js'
import { rawEventsPage } from '../clickhouse/queries/events.js'
import { queryMeterUsage, type UsageAggregation } from '../clickhouse/queries/meter-usage.js'

const { values: args } = parseArgs({
  options: { tenant: { type: 'string' }, environment: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } },
})
if (!args.tenant) {
  console.error('usage: npm run usage:verify -- --tenant T [--environment E] [--from ISO] [--to ISO]')
  process.exit(2)
}
const from = new Date(args.from ?? '2000-01-01T00:00:00Z')
const to = new Date(args.to ?? '2100-01-01T00:00:00Z')
const platform = await startPlatform(loadConfigOrExit(), { services: [], schedule: false, relay: false, listen: false })
let differences = 0
try {
  const meters = (await postgresMeterSource(platform.ctx.orm).load())
    .filter((m) => m.tenant_id === args.tenant && (!args.environment || m.environment_id === args.environment))
  console.log(`meter                          aggregation    raw recount (events)              buckets (events)`)
  for (const meter of meters) {
    const recount = new Recount(meter.aggregation.type)
    const index = indexMeters([meter])
    const scope = { tenantId: meter.tenant_id, environmentId: meter.environment_id, eventName: meter.event_name }
    let after = ''
    for (;;) {
      const page = await rawEventsPage(platform.ctx.ch, scope, after, 20_000)
      for (const r of page) {
        const ts = Number(r.timestamp_ms)
        if (ts < from.getTime() || ts >= to.getTime()) continue
        const e = { event_id: r.event_id, event_name: r.event_name, external_customer_id: r.external_customer_id, customer_id: null, timestamp: ts, source: null, properties: r.properties }
        for (const hit of meterHits(index, meter.tenant_id, meter.environment_id, e, {})?.hits ?? []) recount.add(hit.value, hit.text, ts, r.event_id)
      }
      if (page.length < 20_000) break
      after = page[page.length - 1].event_id
    }
    const [bucket] = await queryMeterUsage(platform.ctx.ch, {
      tenantId: meter.tenant_id, environmentId: meter.environment_id, meterId: meter.id,
      aggregation: meter.aggregation.type as UsageAggregation, start: from, end: to,
    })
    const same = new Decimal(bucket.value).eq(recount.value) && Number(bucket.event_count) === recount.count
    if (!same) differences++
    console.log(
      `${meter.id.padEnd(30)} ${meter.aggregation.type.padEnd(14)} ${`${recount.value.toFixed()} (${recount.count})`.padEnd(33)} ${bucket.value} (${bucket.event_count})${same ? '' : '   DIFFERENT'}`,
    )
  }
  console.log(differences ? `${differences} meter(s) differ` : `${meters.length} meter(s): buckets equal the raw recount`)
} finally {
  await platform.stop()
}
process.exit(differences ? 1 : 0)
