// Helpers shared by the catalog integration tests (features, groups, add-ons, entitlements).
import type { ApiClient, TestPlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
export { assertError, countRows as rowCount } from '../../test/support/assertions.js'

/** Event names in the outbox for one record, oldest first. */
export async function eventsFor(p: TestPlatform, entityId: string): Promise<{ event_name: string; payload: any }[]> {
  return p.ctx.orm.em.getConnection().execute(
    `SELECT event_name, payload FROM system_events_outbox WHERE entity_id = ? ORDER BY created_at, id`,
    [entityId],
  ) as Promise<{ event_name: string; payload: any }[]>
}

export const newMeter = (api: ApiClient, event_name = 'api_call') =>
  created(api.post('/v1/meters', { name: event_name, event_name, aggregation: { type: 'COUNT' } }))

export const newFeature = (api: ApiClient, body: Record<string, unknown>) => created(api.post('/v1/features', body))

export const newPlan = (api: ApiClient, body: Record<string, unknown> = {}) => created(api.post('/v1/plans', { name: 'Pro', ...body }))

export const flatMonthly = (amount: string) => ({
  type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount, billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE',
})

export const usagePrice = (meterId: string, amount: string) => ({
  type: 'USAGE', billing_model: 'FLAT_FEE', currency: 'USD', amount, meter_id: meterId, billing_period: 'MONTHLY', invoice_cadence: 'ARREAR',
})

/** The common fields every record carries, as the API returns them for `r`. */
export function common(r: { id: string; created_at: string; updated_at: string }, tenantId: string, environmentId: string, userId: string, status = 'published') {
  return {
    id: r.id, tenant_id: tenantId, environment_id: environmentId, status, created_at: r.created_at, updated_at: r.updated_at,
    created_by: userId, updated_by: userId,
  }
}
