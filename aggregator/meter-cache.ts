// Keeps the aggregator's meter index fresh: polls a cheap version query and reloads on
// change, reporting meters it has not seen before so they can be backfilled.
import type { MeterSource } from '../billing-api/meters/meter-definitions.js'
import { indexMeters, type MeterDefinition } from './meter-rows.js'

export class MeterCache {
  private index = new Map<string, MeterDefinition[]>()
  private known = new Set<string>()
  private version = ''
  private checkedAt = 0

  constructor(
    private readonly source: MeterSource,
    private readonly maxAgeMs: number,
  ) {}

  get current(): Map<string, MeterDefinition[]> {
    return this.index
  }

  /** Returns the meters that appeared since the previous load (all of them on the first load). */
  async refresh(force = false): Promise<MeterDefinition[]> {
    const now = Date.now()
    if (!force && now - this.checkedAt < this.maxAgeMs) return []
    this.checkedAt = now
    const version = await this.source.version()
    if (version === this.version) return []
    const meters = await this.source.load()
    const fresh = meters.filter((m) => !this.known.has(m.id))
    this.index = indexMeters(meters)
    this.known = new Set(meters.map((m) => m.id))
    this.version = version
    return fresh
  }
}
