// Coalesces the rows of concurrently consumed Kafka batches into fewer, larger ClickHouse
// inserts (every MergeTree insert creates a part, so many small inserts are slow). Each
// batch waits for the flush that carries its rows before committing its offsets; a failed
// flush fails every batch in it, and their replay is deduplicated downstream.
import type { ClickHouse } from '../clickhouse/client.js'
import type { BuiltRows } from './meter-rows.js'

interface Waiter {
  resolve: () => void
  reject: (err: unknown) => void
}

export class InsertBuffer {
  private raw: unknown[][] = []
  private meter: unknown[][] = []
  private waiters: Waiter[] = []
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly ch: ClickHouse,
    private readonly maxRows = 20_000,
    private readonly maxDelayMs = 20,
  ) {}

  add(rows: BuiltRows): Promise<void> {
    for (const r of rows.raw) this.raw.push(r)
    for (const r of rows.meter) this.meter.push(r)
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }))
    if (this.raw.length + this.meter.length >= this.maxRows) void this.flush()
    else this.timer ??= setTimeout(() => void this.flush(), this.maxDelayMs)
    return done
  }

  private async flush(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    const { raw, meter, waiters } = this
    this.raw = []
    this.meter = []
    this.waiters = []
    try {
      await Promise.all([this.ch.insertCompact('events_raw', raw), this.ch.insertCompact('meter_usage', meter)])
      for (const w of waiters) w.resolve()
    } catch (err) {
      for (const w of waiters) w.reject(err)
    }
  }
}
