// Whether the aggregator's live path counts a meter yet: its backfill (one per ClickHouse
// database, aggregator/backfill.ts) is done, so the buckets hold every event before its cuts
// and committed writes carry every event after them. A counter read before that is read again
// once the meter is active (the backfill publishes no committed writes).
import type { MikroORM } from '@mikro-orm/postgresql'
import type { ClickHouse } from '../../clickhouse/client.js'
import { storeId } from '../../clickhouse/queries/write-store.js'

/** an inactive meter is asked about again at most this often */
const RECHECK_MS = 200

export class MeterActivations {
  private readonly active = new Set<string>()
  private refreshed = 0
  private refreshing: Promise<void> | undefined
  private store: Promise<string> | undefined

  constructor(
    private readonly ch: ClickHouse,
    private readonly orm: MikroORM,
  ) {}

  async isActive(meterId: string): Promise<boolean> {
    if (this.active.has(meterId)) return true
    if (Date.now() - this.refreshed >= RECHECK_MS) {
      this.refreshing ??= this.refresh().finally(() => {
        this.refreshing = undefined
      })
    }
    await this.refreshing
    return this.active.has(meterId)
  }

  private async refresh(): Promise<void> {
    this.store ??= storeId(this.ch).catch((err: unknown) => {
      this.store = undefined
      throw err
    })
    const store = await this.store
    const rows = (await this.orm.em.getConnection().execute(
      `SELECT meter_id FROM meter_backfills WHERE store = ? AND state = 'done'`, [store],
    )) as { meter_id: string }[]
    for (const r of rows) this.active.add(r.meter_id)
    this.refreshed = Date.now()
  }
}
