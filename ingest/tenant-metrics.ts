// Per-tenant ingest counts beside the global ones (platform/metrics.ts), with bounded labels.
import { tenantEventsIngested } from '../platform/business-metrics.js'
import { metricLabels } from '../platform/metric-labels.js'

export function countTenantEvents(tenantId: string, outcome: 'accepted' | 'rejected', events: number): void {
  tenantEventsIngested.inc({ tenant: metricLabels().tenant(tenantId), outcome }, events)
}
