// A migrated chDB engine of its own for a test file that needs only ClickHouse (no platform).
import { after, before } from 'node:test'
import { rmSync } from 'node:fs'
import { ClickHouse } from '../../clickhouse/client.js'
import { migrateClickHouse } from '../../clickhouse/migrate.js'
import { testConfig } from './platform.js'

/** Opens a fresh engine before the file's tests and closes it after; `ch()` is that engine. */
export function useChdb(name: string): () => ClickHouse {
  const config = testConfig()
  const chdbPath = `${config.clickhouse.chdbPath}-${name}`
  let ch: ClickHouse | undefined
  before(async () => {
    rmSync(chdbPath, { recursive: true, force: true })
    ch = ClickHouse.open({ ...config.clickhouse, chdbPath })
    await migrateClickHouse(ch)
  })
  after(async () => {
    await ch?.close()
  })
  return () => ch!
}
