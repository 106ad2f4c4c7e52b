// The aggregator's writer fed directly, holding every shard of its ClickHouse database: for
// tests that write events without Kafka. Postgres is the test database (the fence's records are
// kept per ClickHouse database, so files with engines of their own do not meet).
import type pg from 'pg'
import type { ClickHouse } from '../../clickhouse/client.js'
import { ShardFence } from '../../aggregator/shard-fence.js'
import { openStandaloneWriter, type Writer, type WriterOptions } from '../../aggregator/writer.js'
import type { WriteStage } from '../../aggregator/write-stage.js'
import type { MeterSource } from '../../schemas/meters.js'
import { testConfig } from './platform.js'

let pool: pg.Pool | undefined

export function testPool(): pg.Pool {
  pool ??= ShardFence.pool(testConfig().databaseUrl)
  return pool
}

export async function directWriter(ch: ClickHouse, meters: MeterSource, opts: Partial<WriterOptions> = {}): Promise<Writer> {
  return openStandaloneWriter({ ch, pg: testPool(), meters, meterRefreshMs: 0, log: () => {}, ...opts })
}

export async function directStage(ch: ClickHouse, meters: MeterSource, opts: Partial<WriterOptions> = {}): Promise<WriteStage> {
  return (await directWriter(ch, meters, opts)).stage
}
