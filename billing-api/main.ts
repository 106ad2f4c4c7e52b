// The billing-api service alone, for split deployments (docker-compose) against real servers.
import { runServices } from '../scripts/platform.js'

await runServices(['billing-api'])
