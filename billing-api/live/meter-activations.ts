// Whether the aggregator's live path counts a meter yet. A new meter's events written before its
// activation reach the buckets through its backfill, which publishes no committed writes: a
// counter read before the activation is read again once the meter is active.
import type { ClickHouse } from '../../clickhouse/client.js'
import { readActivations } from '../../clickhouse/queries/meter-activations.js'

/** an inactive meter is asked about again at most this often */
const RECHECK_MS = 200

export class MeterActivations {
  private readonly active = new Set<string>()
  private refreshed = 0
  private refreshing: Promise<void> | undefined

  constructor(private readonly ch: ClickHouse) {}

  async isActive(meterId: string): Promise<boolean> {
    if (this.active.has(meterId)) return true
    if (Date.now() - this.refreshed >= RECHECK_MS) {
      this.refreshing ??= readActivations(this.ch)
        .then((all) => {
          for (const [id, us] of all) if (us > 0n) this.active.add(id)
          this.refreshed = Date.now()
        })
        .finally(() => {
          this.refreshing = undefined
        })
    }
    await this.refreshing
    return this.active.has(meterId)
  }
}
