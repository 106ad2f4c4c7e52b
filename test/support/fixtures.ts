// Small builders shared by the integration tests.
import type { ApiClient } from './platform.js'
import assert from 'node:assert/strict'

/** The body of a create that answered `status` (201, or 200 for the creates whose Flexprice operation answers 200). */
export async function created<T = any>(res: Promise<{ status: number; body: T }>, status: 200 | 201 = 201): Promise<T> {
  const r = await res
  assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`)
  return r.body
}

export async function ingestAll(api: ApiClient, events: object[], batchSize = 1000): Promise<void> {
  for (let i = 0; i < events.length; i += batchSize) {
    const res = await api.post('/v1/events/raw/bulk', { events: events.slice(i, i + batchSize) })
    assert.equal(res.status, 202, JSON.stringify(res.body))
  }
}

export async function usage(api: ApiClient, meterId: string, body: Record<string, unknown>) {
  const res = await api.post(`/v1/meters/${meterId}/usage`, {
    start_time: '2000-01-01T00:00:00Z',
    end_time: '2100-01-01T00:00:00Z',
    ...body,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}
