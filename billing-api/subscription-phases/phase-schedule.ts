// The rules of a phase schedule, on dates only. Pure.
import { ValidationError } from '../../platform/errors.js'

export interface ScheduledPhase {
  id: string
  start_date: Date
  applied_at: Date | null
}

/** A new phase starts in the future, after the subscription's start and after every applied phase, on a start no other phase has. */
export function checkNewPhaseStart(phases: ScheduledPhase[], start: Date, subscriptionStart: Date, now: Date): void {
  if (start <= now) throw new ValidationError(`start_date must be in the future (after ${now.toISOString()})`, 'start_date')
  if (start <= subscriptionStart) throw new ValidationError(`start_date must be after the subscription's start ${subscriptionStart.toISOString()}`, 'start_date')
  const lastApplied = phases.filter((p) => p.applied_at).reduce<Date | null>((max, p) => (!max || p.start_date > max ? p.start_date : max), null)
  if (lastApplied && start <= lastApplied) throw new ValidationError(`start_date must be after the phase already started at ${lastApplied.toISOString()}`, 'start_date')
  if (phases.some((p) => p.start_date.getTime() === start.getTime())) throw new ValidationError(`a phase already starts at ${start.toISOString()}`, 'start_date')
}

/** Each phase ends where the next one starts; the last one is open. */
export function phaseEnds(phases: ScheduledPhase[]): Map<string, Date | null> {
  const sorted = [...phases].sort((a, b) => a.start_date.getTime() - b.start_date.getTime())
  return new Map(sorted.map((p, i) => [p.id, sorted[i + 1]?.start_date ?? null]))
}
