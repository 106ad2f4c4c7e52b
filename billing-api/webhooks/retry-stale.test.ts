// The stale-webhook retry job's settings: 48-hour cut-off, newest first, exclusions, type
// filter, max attempts; and the token bucket that limits its rate.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { newId } from '../../platform/ids.js'
import { usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { DEFAULT_STALE_RETRY, retryStaleWebhooks, TokenBucket } from './retry-stale.js'

const clock = new ManualClock(new Date('2026-11-20T12:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

const hoursAgo = (h: number) => new Date(clock.now().getTime() - h * 3_600_000)

test('re-queues only stale, recent-enough, allowed deliveries under max attempts, newest first', async () => {
  const t = await p.newTenant()
  const excluded = await p.newTenant()
  const scope = { tenant_id: t.tenantId, environment_id: t.environments.production }
  const ep = await created(t.api.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/unused' }))
  const exEp = await created(excluded.api.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/unused' }))
  const conn = p.ctx.orm.em.getConnection()
  const insert = async (name: string, o: { hours: number; status?: string; attempts?: number; event?: string; tenant?: typeof scope; endpoint?: string }) => {
    const s = o.tenant ?? scope
    await conn.execute(
      `INSERT INTO webhook_deliveries (id, tenant_id, environment_id, endpoint_id, event_id, event_name, payload, delivery_status, attempts, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, '{}'::jsonb, ?, ?, ?, ?)`,
      [name, s.tenant_id, s.environment_id, o.endpoint ?? ep.id, newId('evt'), o.event ?? 'invoice.finalized', o.status ?? 'FAILED', o.attempts ?? 1, hoursAgo(o.hours), hoursAgo(o.hours)],
    )
    return name
  }
  const suffix = t.tenantId.slice(-6)
  const newest = await insert(`d-newest-${suffix}`, { hours: 1 })
  const pending = await insert(`d-pending-${suffix}`, { hours: 5, status: 'PENDING' })
  const older = await insert(`d-older-${suffix}`, { hours: 47 })
  await insert(`d-too-old-${suffix}`, { hours: 49 })
  await insert(`d-exhausted-${suffix}`, { hours: 2, attempts: 5 })
  await insert(`d-succeeded-${suffix}`, { hours: 2, status: 'SUCCEEDED' })
  await insert(`d-other-type-${suffix}`, { hours: 3, event: 'customer.created' })
  await insert(`d-recent-${suffix}`, { hours: 0.01 }) // touched a minute ago: still in the queue's own retries
  await insert(`d-excluded-${suffix}`, { hours: 1, tenant: { tenant_id: excluded.tenantId, environment_id: excluded.environments.production }, endpoint: exEp.id })

  const settings = { ...DEFAULT_STALE_RETRY, rate_limit: 100, excluded_tenants: [excluded.tenantId], allowed_event_types: ['invoice.finalized'] }
  assert.deepEqual(await retryStaleWebhooks(p.ctx, settings, t.tenantId), [newest, pending, older])
  assert.deepEqual(await retryStaleWebhooks(p.ctx, settings, excluded.tenantId), [])
  assert.deepEqual(await retryStaleWebhooks(p.ctx, { ...settings, allowed_event_types: [] }, t.tenantId), [newest, `d-other-type-${suffix}`, pending, older])
  assert.deepEqual(await retryStaleWebhooks(p.ctx, { ...settings, enabled: false }, t.tenantId), [])
})

test('the token bucket allows rate_limit at once, then one per 1/rate seconds', async () => {
  let now = 0
  const bucket = new TokenBucket(5, () => now)
  for (let i = 0; i < 5; i++) await bucket.take()
  let sixth = false
  const pending = bucket.take().then(() => (sixth = true))
  await new Promise((r) => setTimeout(r, 50))
  assert.equal(sixth, false, 'the sixth token waits')
  now += 200 // one token refills after 1/5 s
  await pending
  assert.equal(sixth, true)
})
