// One pick of a delivery job: ask the gate, then attempt, then release the slot and record the
// outcome in the endpoint's circuit. A refused delivery goes back to BullMQ's delayed set
// without costing an attempt (DelayedError), so it is postponed, never lost.
import { DelayedError, type Job } from 'bullmq'
import type { MikroORM } from '@mikro-orm/postgresql'
import type { Clock } from '../../platform/clock.js'
import { backgroundFailures, webhookAttemptSeconds, webhookCircuitTransitions, webhookDeliveries, webhookDeliverySeconds } from '../../platform/metrics.js'
import { attemptDelivery, cancelDelivery, DeliveryFailed, endpointGone, type AttemptResult, type DeliverySettings } from './deliver.js'
import { retryDelayMs } from './deferral.js'
import type { AttemptOutcome, DeliveryGate, GateTarget } from './delivery-gate.js'

export interface DeliveryJobData { delivery_id: string }

/** DeliverySettings: the attempt's timeout, the SSRF policy and the signing-secret keys */
export interface ProcessDeps extends DeliverySettings {
  orm: MikroORM
  clock: Clock
  gate: DeliveryGate
  leaseMs: number
  /** moves parked jobs back to waiting */
  wake(jobIds: string[]): Promise<void>
}

type Target = GateTarget & { delivery_status: string; endpoint_status: string; disabled_at: Date | null }

async function targetOf(orm: MikroORM, deliveryId: string): Promise<Target | undefined> {
  const rows = (await orm.em.getConnection().execute(
    `SELECT d.tenant_id, d.endpoint_id, d.delivery_status, e.status AS endpoint_status, e.disabled_at
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.tenant_id = d.tenant_id
      WHERE d.id = ?`,
    [deliveryId],
  )) as Target[]
  return rows[0]
}

export async function processDelivery(deps: ProcessDeps, job: Job<DeliveryJobData>, token: string | undefined): Promise<AttemptResult> {
  const target = await targetOf(deps.orm, job.data.delivery_id)
  // A missing row fails the attempt as before (findOneOrFail in attemptDelivery).
  if (target?.delivery_status === 'SUCCEEDED') return 'already_delivered'
  // The endpoint was deleted or disabled (endpoint-lifecycle.ts): the job ends without an attempt or a gate slot.
  const gone = target && (target.delivery_status === 'CANCELLED' ? 'cancelled' : endpointGone({ status: target.endpoint_status, disabled_at: target.disabled_at }))
  if (gone) {
    if (gone !== 'cancelled') await cancelDelivery(deps.orm, job.data.delivery_id, gone)
    webhookDeliveries.inc({ outcome: 'cancelled' })
    return 'cancelled'
  }
  const admission = target ? await deps.gate.admit(target, job.id!) : { verdict: 'ok' as const, waitMs: 0 }
  if (admission.verdict !== 'ok' && admission.verdict !== 'probe') {
    webhookDeliveries.inc({ outcome: admission.verdict === 'open' ? 'circuit_open' : 'concurrency_limited' })
    await job.moveToDelayed(Date.now() + retryDelayMs(admission, deps.leaseMs), token)
    if (admission.verdict !== 'open') await park(deps, target!, job.id!, admission.verdict)
    throw new DelayedError()
  }
  let outcome: AttemptOutcome = 'none'
  const started = performance.now()
  try {
    const result = await attemptDelivery(deps.orm, job.data.delivery_id, deps.clock, deps)
    if (result === 'delivered') {
      outcome = 'success'
      webhookDeliveries.inc({ outcome: 'success' })
      webhookDeliverySeconds.observe((Date.now() - job.timestamp) / 1000)
    }
    return result
  } catch (err) {
    if (err instanceof DeliveryFailed) outcome = 'failure'
    throw err
  } finally {
    if (outcome !== 'none') webhookAttemptSeconds.observe({ outcome: outcome === 'success' ? 'success' : 'failed' }, (performance.now() - started) / 1000)
    if (target) await release(deps, target, job.id!, outcome, admission.verdict === 'probe')
  }
}

async function park(deps: ProcessDeps, target: GateTarget, jobId: string, on: 'busy_endpoint' | 'busy_tenant'): Promise<void> {
  try {
    await deps.wake(await deps.gate.park(target, jobId, on))
  } catch (err) {
    // The job is already delayed: its fallback delay brings it back.
    backgroundFailures.inc({ operation: 'webhook_gate_park' })
    console.error(`webhook delivery gate: parking ${jobId} failed`, err)
  }
}

// Best effort: if Redis fails here the slot's lease expires and a parked job's fallback delay
// wakes it, so the attempt's own result stands.
async function release(deps: ProcessDeps, target: GateTarget, jobId: string, outcome: AttemptOutcome, wasProbe: boolean): Promise<void> {
  try {
    const { transition, wake } = await deps.gate.finish(target, jobId, outcome, wasProbe)
    if (transition) webhookCircuitTransitions.inc({ to: transition === 'opened' ? 'open' : 'closed' })
    await deps.wake(wake)
  } catch (err) {
    backgroundFailures.inc({ operation: 'webhook_gate_release' })
    console.error(`webhook delivery gate: releasing ${jobId} failed`, err)
  }
}
