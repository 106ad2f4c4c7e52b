// The chaos run's audit, per event id: every meter on the run's events declares
// `aggregation.group_by: "eid"` (each event's `eid` property is its event_id), so the usage API
// grouped by eid gives each event's count. An acknowledged event must count exactly once, an
// unacknowledged one at most once; a lost event and a doubled one never cancel out.
import type { ChaosEvent } from './client.js'
import { failed, type Api, type ApiAnswer } from './http.js'

export interface AuditMeter {
  id: string
  name: string
  aggregation: 'COUNT' | 'SUM'
}

export interface MeterAudit {
  meter: AuditMeter
  /** distinct event ids counted at least once */
  counted: number
  /** the meter's total over the run (COUNT: events; SUM: the sum of n) */
  total: number
  doubled: string[]
  lost: string[]
  /** unacknowledged events counted once (allowed: the server accepted them, the client never heard) */
  unackedCounted: number
  /** ids counted that the client never sent */
  unknown: string[]
}

interface UsageAnswer {
  value: string
  event_count: number
  items: { value: string; event_count: number; group_by: { eid: string } }[]
}

export interface Window {
  start: string
  end: string
  customers: number
}

/** the meter's total over the window (one cheap read without group_by) */
/**
 * A usage read, retried while the platform answers 503 or not at all (after the stream a
 * dependency may still be coming back, e.g. the Postgres a fault stopped last): the audit waits
 * for an answer instead of ending the run without one.
 */
async function usageRead(api: Api, meterId: string, body: Record<string, unknown>): Promise<ApiAnswer> {
  const until = Date.now() + 120_000
  for (;;) {
    const res = await api.post(`/v1/meters/${meterId}/usage`, body).catch(failed)
    if ((res.status !== 503 && res.status !== 0) || Date.now() > until) return res
    await new Promise((r) => setTimeout(r, 1000))
  }
}

export async function meterTotal(api: Api, meter: AuditMeter, w: Window): Promise<number> {
  const res = await usageRead(api, meter.id, { start_time: w.start, end_time: w.end })
  if (res.status !== 200) throw new Error(`usage of ${meter.id}: ${res.status} ${JSON.stringify(res.body)}`)
  const usage = res.body as UsageAnswer
  return meter.aggregation === 'COUNT' ? Number(usage.event_count) : Number(usage.value)
}

/** each event id's count in the meter, read customer by customer */
export async function perEventCounts(api: Api, meter: AuditMeter, w: Window): Promise<Map<string, number>> {
  const counts = new Map<string, number>()
  for (let c = 0; c < w.customers; c++) {
    const res = await usageRead(api, meter.id, { external_customer_id: `cust-${c}`, start_time: w.start, end_time: w.end, group_by: ['eid'] })
    if (res.status !== 200) throw new Error(`usage of ${meter.id} by eid for cust-${c}: ${res.status} ${JSON.stringify(res.body)}`)
    for (const item of (res.body as UsageAnswer).items) {
      const n = meter.aggregation === 'COUNT' ? Number(item.event_count) : Number(item.value)
      counts.set(item.group_by.eid, (counts.get(item.group_by.eid) ?? 0) + n)
    }
  }
  return counts
}

export function auditCounts(meter: AuditMeter, events: Map<string, ChaosEvent>, counts: Map<string, number>): MeterAudit {
  const a: MeterAudit = { meter, counted: 0, total: 0, doubled: [], lost: [], unackedCounted: 0, unknown: [] }
  for (const [eid, n] of counts) {
    a.total += n
    if (n > 0) a.counted++
    const e = events.get(eid)
    if (!e) a.unknown.push(eid)
    else if (n > 1) a.doubled.push(`${eid}x${n}`)
    else if (n === 1 && !e.acked) a.unackedCounted++
  }
  for (const e of events.values()) if (e.acked && (counts.get(e.id) ?? 0) < 1) a.lost.push(e.id)
  return a
}
