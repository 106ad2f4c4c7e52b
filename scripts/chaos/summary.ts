// The printed summary of a chaos run: the seed, every fault with its time, the client's figures
// and the audit's verdict.
import type { ChaosSummary } from './run.js'

export function formatSummary(s: ChaosSummary): string {
  const kinds = new Map<string, number>()
  for (const f of s.faults) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1)
  const c = s.client
  const lines = [
    '',
    `=== chaos: seed ${s.seed}, ${s.seconds} s, run ${s.runId} ===`,
    `faults: ${s.faults.length} (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')})`,
    ...s.faults.map((f, i) => `  ${String(i + 1).padStart(3)} ${String(f.atS).padStart(7)}s ${f.kind.padEnd(17)} ${f.ms} ms  ${f.note}`),
    `requests ${c.requests} (202: ${c.accepted}, failed ${c.failed}, timed out ${c.timeouts}, resent ${c.resent}, refused ${c.rejected}); batches abandoned ${c.abandonedBatches}, mixed ${c.mixedBatches}, late resends ${c.lateBatches}, abandoned events resent ${c.abandonedResent}`,
    `events in accepted requests ${c.eventsAccepted}: copies of acknowledged events ${c.copies}, of which older than the hot window ${c.coldCopies} (${c.eventsAccepted ? ((100 * c.coldCopies) / c.eventsAccepted).toFixed(1) : '0'} % of the events: the cold path)`,
    `sent ${s.sent}, acknowledged ${s.acknowledged}, unacknowledged ${s.sent - s.acknowledged}; caught up ${s.settleMs} ms after the stream`,
    ...s.meters.map((a) => `  meter ${a.meter.name} ${a.meter.aggregation}: counted ${a.counted}, total ${a.total}, doubled ${a.doubled.length}, lost ${a.lost.length}, unacknowledged counted ${a.unackedCounted}, unknown ${a.unknown.length}`),
    `doubled ${s.doubled.length}${s.doubled.length ? `: ${s.doubled.slice(0, 20).join(' ')}` : ''}`,
    `lost ${s.lost.length}${s.lost.length ? `: ${s.lost.slice(0, 20).join(' ')}` : ''}`,
    ...(s.unknown.length ? [`counted but never sent ${s.unknown.length}: ${s.unknown.slice(0, 20).join(' ')}`] : []),
    ...(s.rejections.length ? [`refused requests: ${s.rejections.join(' | ')}`] : []),
    `platform crashes (not injected): ${s.crashes.length}${s.crashes.length ? `: ${s.crashes.join(' | ')}` : ''}`,
    `last stop: ${s.lastStop}`,
    `usage:verify exit ${s.verify.status}: ${s.verify.output.trim().split('\n').at(-1)}`,
    s.ok && s.crashes.length === 0
      ? 'RESULT: OK (every acknowledged event counted exactly once, none twice)'
      : `RESULT: FAILED${s.ok ? ' (the platform crashed; the audit itself is clean)' : ''}`,
  ]
  return lines.join('\n')
}
