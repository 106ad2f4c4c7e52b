// The local ClickHouse endpoint as a process (`npm run up` starts it; clickhouse/endpoint/):
// serves the embedded engine at CLICKHOUSE_ENDPOINT_PORT until SIGINT/SIGTERM.
import { join } from 'node:path'
import { startEndpoint } from '../clickhouse/endpoint/server.js'
import { settingDefault } from '../platform/settings.js'
import { stopWhenSupervisorDies } from '../platform/orphan-guard.js'

const env = process.env
const dataDir = env.METERLINE_DATA_DIR || join(process.cwd(), '.data')
stopWhenSupervisorDies() // before the start: an endpoint still starting does not outlive its supervisor either
const endpoint = await startEndpoint({
  path: env.CHDB_PATH || join(dataDir, 'chdb'),
  host: env.HOST || settingDefault('HOST')!,
  port: Number(env.CLICKHOUSE_ENDPOINT_PORT || settingDefault('CLICKHOUSE_ENDPOINT_PORT')),
  connections: Number(env.CHDB_CONNECTIONS || settingDefault('CHDB_CONNECTIONS')),
  user: env.CLICKHOUSE_USER || undefined,
  password: env.CLICKHOUSE_PASSWORD || undefined,
  faults: env.CLICKHOUSE_ENDPOINT_FAULTS === 'true',
})
console.log(`[clickhouse-endpoint] serving ${env.CHDB_PATH || join(dataDir, 'chdb')} at ${endpoint.url}${endpoint.faults ? ' (faults can be injected at /__faults)' : ''}`)
let stopping = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return
    stopping = true
    void endpoint.close().then(() => process.exit(0))
  })
}
