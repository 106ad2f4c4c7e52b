// Time is injected wherever billing periods, trials, delays or schedules are computed,
// so tests move time instead of sleeping.
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  constructor(private current: Date) {}
  now(): Date {
    return new Date(this.current.getTime())
  }
  set(d: Date): void {
    this.current = new Date(d.getTime())
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms)
  }
}
