// What `npm run up` prints once the platform runs: where it is, the demo tenant, curl lines.
import type { CreatedTenant } from '../billing-api/tenants/index.js'

export function prometheusArg(): string | undefined {
  const at = process.argv.indexOf('--prometheus')
  return at >= 0 ? process.argv[at + 1] : undefined
}

export function demoBanner(opts: { apiUrl: string; ingestUrl: string; what: string; demo: CreatedTenant }): string {
  const { apiUrl: base, ingestUrl: ingest, demo } = opts
  const prometheus = prometheusArg()
  const prometheusLine = prometheus ? `\nPrometheus: ${prometheus}  (targets ${prometheus}/targets, alert rules ${prometheus}/alerts)` : ''
  return `
Meterline is running at ${base}  (${opts.what})${ingest === base ? '' : `\nEvents are ingested at ${ingest}`}
Demo tenant ${demo.tenantId}, production environment ${demo.environments.production}
API key: ${demo.apiKey}
Console: ${base}/console/  (sign in with the API key above)

  export ML_KEY=${demo.apiKey}
  curl -s -X POST ${base}/v1/meters -H "x-api-key: $ML_KEY" -H 'content-type: application/json' \\
    -d '{"name":"API calls","event_name":"api_call","aggregation":{"type":"COUNT"}}'
  curl -s -X POST ${ingest}/v1/events -H "x-api-key: $ML_KEY" -H 'content-type: application/json' \\
    -d '{"event_name":"api_call","external_customer_id":"cust-1","properties":{"path":"/v1/x"}}'
  curl -s -X POST ${base}/v1/meters/<meter_id>/usage -H "x-api-key: $ML_KEY" -H 'content-type: application/json' \\
    -d '{"external_customer_id":"cust-1","start_time":"2020-01-01T00:00:00Z","end_time":"2100-01-01T00:00:00Z"}'
  curl -s ${base}/v1/tenants/${demo.tenantId} -H "x-api-key: $ML_KEY"

OpenAPI: ${base}/v1/docs/openapi.json   Metrics: ${base}/metrics   Stop: Ctrl-C or npm run down${prometheusLine}
`
}
