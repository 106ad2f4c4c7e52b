// Keeps the aggregator's view of the published meters fresh: polls a cheap version query and
// reloads on change. Which of them the live path counts is decided by active-meters.ts.
import type { MeterSource } from '../schemas/meters.js'
import type { MeterDefinition } from '../schemas/meters.js'

export class MeterCache {
  private meters: MeterDefinition[] = []
  private version = ''
  private checkedAt = 0

  constructor(
    private readonly source: MeterSource,
    private readonly maxAgeMs: number,
  ) {}

  get all(): MeterDefinition[] {
    return this.meters
  }

  /** True once a load succeeded: `all` is then a usable, if possibly stale, view. */
  get loaded(): boolean {
    return this.loadedOnce
  }

  private loadedOnce = false

  /** Reloads when the version changed and the last check is older than maxAgeMs (or when forced). */
  async refresh(force = false): Promise<void> {
    const now = Date.now()
    if (!force && now - this.checkedAt < this.maxAgeMs) return
    this.checkedAt = now
    const version = await this.source.version()
    if (version === this.version) return
    this.meters = await this.source.load()
    this.version = version
    this.loadedOnce = true
  }
}
