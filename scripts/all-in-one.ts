// The local platform: ingest, aggregator, billing-api and scheduler in one process.
//   node --import tsx scripts/all-in-one.ts [--demo] [--prometheus <url>]   (the URL is only printed)
import { loadConfigOrExit } from '../platform/config.js'
import { ensureDemoTenant } from './demo-tenant.js'
import { ALL_SERVICES, runServices } from './composition-root.js'

const config = loadConfigOrExit()
// npm run up starts a local Prometheus (scripts/prometheus.sh) and passes its URL along
function prometheusLine(): string {
  const at = process.argv.indexOf('--prometheus')
  const url = at >= 0 ? process.argv[at + 1] : undefined
  return url ? `\nPrometheus: ${url}  (targets ${url}/targets, alert rules ${url}/alerts)` : ''
}
const platform = await runServices(ALL_SERVICES, { migrate: true })

if (process.argv.includes('--demo')) {
  const demo = await ensureDemoTenant(platform.ctx.orm, config.dataDir, config.apiKeyHashing)
  const base = platform.url
  console.log(`
Meterline is running at ${base}  (ingest + aggregator + billing-api + scheduler, one process)
Demo tenant ${demo.tenantId}, production environment ${demo.environments.production}
API key: ${demo.apiKey}
Console: ${base}/console/  (sign in with the API key above)

  export ML_KEY=${demo.apiKey}
  curl -s -X POST ${base}/v1/meters -H "x-api-key: $ML_KEY" -H 'content-type: application/json' \\
    -d '{"name":"API calls","event_name":"api_call","aggregation":{"type":"COUNT"}}'
  curl -s -X POST ${base}/v1/events -H "x-api-key: $ML_KEY" -H 'content-type: application/json' \\
    -d '{"event_name":"api_call","external_customer_id":"cust-1","properties":{"path":"/v1/x"}}'
  curl -s -X POST ${base}/v1/meters/<meter_id>/usage -H "x-api-key: $ML_KEY" -H 'content-type: application/json' \\
    -d '{"external_customer_id":"cust-1","start_time":"2020-01-01T00:00:00Z","end_time":"2100-01-01T00:00:00Z"}'
  curl -s ${base}/v1/tenants/${demo.tenantId} -H "x-api-key: $ML_KEY"

OpenAPI: ${base}/v1/docs/openapi.json   Metrics: ${base}/metrics   Stop: Ctrl-C or npm run down${prometheusLine()}
`)
}
