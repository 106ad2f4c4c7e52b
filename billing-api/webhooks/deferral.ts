// When a delivery the gate refused is tried again (pure; delivery-gate.ts says why it refused).
import type { Admission } from './delivery-gate.js'

/**
 * open: after the cool-down (or the probe's lease), spread over a fifth of the wait so a backlog
 * does not hit a just-closed circuit at once. busy: the job is parked and woken when a slot is
 * released; this is only the fallback if that wake-up is lost (a crashed worker), one to three
 * leases later, spread for the same reason.
 */
export function retryDelayMs(admission: Admission, leaseMs: number, random: () => number = Math.random): number {
  if (admission.verdict === 'open') return admission.waitMs + Math.floor(random() * Math.max(100, admission.waitMs / 5))
  return Math.floor(leaseMs * (1 + 2 * random()))
}

/** The longest an attempt holds its slot: the HTTP timeout plus time to load and record it. */
export const leaseMsFor = (timeoutMs: number) => timeoutMs + 5_000
