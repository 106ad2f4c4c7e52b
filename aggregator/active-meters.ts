// The meters the live path counts. A meter joins only between two writes of the write stage,
// after its backfill from events_raw is complete, so every event is counted by exactly one of
// the two: the backfill (events written before) or the live path (events written after).
// Activations are persisted (meter_activations), so a restart resumes with the same set.
import type { ClickHouse } from '../clickhouse/client.js'
import { readActivations, recordActivation } from '../clickhouse/queries/meter-activations.js'
import { aggregatorBackfillFailures, backgroundFailures } from '../platform/metrics.js'
import { backfillMeter } from './backfill.js'
import type { MeterCache } from './meter-cache.js'
import { indexMeters } from './meter-rows.js'
import type { MeterDefinition } from '../schemas/meters.js'

/** Microseconds, strictly increasing within the process: orders activations against ledger writes. */
export class MonotonicClock {
  private last = 0n
  nowUs(): bigint {
    const now = BigInt(Date.now()) * 1000n
    this.last = now > this.last ? now : this.last + 1n
    return this.last
  }
}

const BACKFILL_RETRY_MS = [1_000, 5_000, 30_000, 60_000]
/** activated_us 0: a backfill started and did not finish (its partial rows are removed first). */
const STARTED = 0n

export class ActiveMeters {
  readonly clock = new MonotonicClock()
  private active = new Map<string, { def: MeterDefinition; activatedUs: bigint }>()
  private persisted: Map<string, bigint> | null = null
  private failures = new Map<string, { attempts: number; retryAt: number }>()
  private currentIndex = new Map<string, MeterDefinition[]>()

  constructor(
    private readonly ch: ClickHouse,
    private readonly cache: MeterCache,
    private readonly log: (msg: string, err?: unknown) => void,
    /** fault injection for tests: runs after each backfill page is written */
    private readonly afterBackfillPage?: (meterId: string) => Promise<void> | void,
  ) {}

  get index(): Map<string, MeterDefinition[]> {
    return this.currentIndex
  }

  activatedUs(meterId: string): bigint {
    return this.active.get(meterId)?.activatedUs ?? 0n
  }

  /** Meters waiting for a successful backfill. */
  get waiting(): string[] {
    return [...this.failures.keys()]
  }

  async prepare(): Promise<void> {
    await this.refreshDefinitions()
    this.persisted ??= await readActivations(this.ch)
    const defs = this.cache.all
    const ids = new Set(defs.map((m) => m.id))
    let changed = false
    for (const id of [...this.active.keys()]) {
      if (!ids.has(id)) {
        this.active.delete(id)
        changed = true
      }
    }
    for (const m of defs) {
      const current = this.active.get(m.id)
      if (current) {
        if (current.def !== m) {
          current.def = m
          changed = true
        }
        continue
      }
      const done = this.persisted.get(m.id)
      if (done !== undefined && done !== STARTED) {
        this.active.set(m.id, { def: m, activatedUs: done })
        changed = true
        continue
      }
      const failed = this.failures.get(m.id)
      if (failed && failed.retryAt > Date.now()) continue
      if (await this.backfill(m, done === STARTED || failed !== undefined)) changed = true
    }
    if (changed) this.currentIndex = indexMeters([...this.active.values()].map((a) => a.def))
  }

  private sourceDown = false

  /**
   * With Postgres down the meters keep their last known definitions (they cannot change while
   * the API that edits them is down too), so usage keeps being written; only a first load
   * must succeed. The outage is logged once, counted, and its end logged.
   */
  private async refreshDefinitions(): Promise<void> {
    try {
      await this.cache.refresh()
      if (this.sourceDown) this.log('meter definitions readable again')
      this.sourceDown = false
    } catch (err) {
      if (!this.cache.loaded) throw err
      backgroundFailures.inc({ operation: 'aggregator_meter_refresh' })
      if (!this.sourceDown) this.log('meter definitions cannot be refreshed; counting with the last known ones', err)
      this.sourceDown = true
    }
  }

  private async backfill(m: MeterDefinition, clearFirst: boolean): Promise<boolean> {
    try {
      if (!clearFirst) await recordActivation(this.ch, m.id, STARTED)
      await backfillMeter(this.ch, m, clearFirst, this.afterBackfillPage)
      const us = this.clock.nowUs()
      await recordActivation(this.ch, m.id, us)
      this.persisted!.set(m.id, us)
      this.active.set(m.id, { def: m, activatedUs: us })
      this.failures.delete(m.id)
      return true
    } catch (err) {
      const attempts = (this.failures.get(m.id)?.attempts ?? 0) + 1
      const wait = BACKFILL_RETRY_MS[Math.min(attempts - 1, BACKFILL_RETRY_MS.length - 1)]
      this.failures.set(m.id, { attempts, retryAt: Date.now() + wait })
      this.persisted!.set(m.id, STARTED)
      aggregatorBackfillFailures.inc()
      this.log(`backfill of meter ${m.id} failed (attempt ${attempts}); retrying in ${wait} ms, its events stay in events_raw`, err)
      return false
    }
  }
}
