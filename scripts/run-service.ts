// One service alone, for split deployments (docker-compose) against real ClickHouse and Kafka:
//   npx tsx scripts/run-service.ts ingest|aggregator|billing-api|scheduler
import { ALL_SERVICES, runServices, type ServiceName } from './composition-root.js'
import { stopWhenSupervisorDies } from '../platform/orphan-guard.js'

const name = process.argv[2]
if (!ALL_SERVICES.includes(name as ServiceName)) {
  console.error(`usage: run-service.ts ${ALL_SERVICES.join('|')} (got ${name ?? 'nothing'})`)
  process.exit(2)
}
// Before the start: a role still starting (waiting on Postgres, Kafka or its group) when its
// supervisor dies must not live on; until runServices registered its handlers, SIGTERM ends it at once.
stopWhenSupervisorDies()
await runServices([name as ServiceName])
