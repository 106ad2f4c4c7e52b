// Keeps the aggregator's meter index fresh: polls a cheap version query and reloads on
// change, reporting meters it has not seen before so they can be backfilled.
import type { MeterSource } from '../billing-api/meters/meter-definitions.js'
import { indexMeters, type MeterDefinition } from './meter-rows.js'

export interface MeterSnapshot {
  index: Map<string, MeterDefinition[]>
  ids: Set<string>
}

export class MeterCache {
  private snapshot: MeterSnapshot = { index: new Map(), ids: new Set() }
  private meters: MeterDefinition[] = []
  private version = ''
  private checkedAt = 0

  constructor(
    private readonly source: MeterSource,
    private readonly maxAgeMs: number,
  ) {}

  get current(): MeterSnapshot {
    return this.snapshot
  }

  /** Meters loaded since `earlier` was taken. */
  addedSince(earlier: MeterSnapshot): MeterDefinition[] {
    return earlier === this.snapshot ? [] : this.meters.filter((m) => !earlier.ids.has(m.id))
  }

  /** Returns the meters that appeared since the previous load (all of them on the first load). */
  async refresh(force = false): Promise<MeterDefinition[]> {
    const now = Date.now()
    if (!force && now - this.checkedAt < this.maxAgeMs) return []
    this.checkedAt = now
    const version = await this.source.version()
    if (version === this.version) return []
    const meters = await this.source.load()
    const fresh = meters.filter((m) => !this.snapshot.ids.has(m.id))
    this.meters = meters
    this.snapshot = { index: indexMeters(meters), ids: new Set(meters.map((m) => m.id)) }
    this.version = version
    return fresh
  }
}
