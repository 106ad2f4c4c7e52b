// The production topology's processes on one machine, in the order data flows: the local
// ClickHouse endpoint (owner of the embedded engine), ingest, the aggregators, billing-api, the
// scheduler. Every role reaches ClickHouse over HTTP as it would a server.
import type { RoleKind } from '../../platform/topology-file.js'

export interface Role {
  /** unique: `aggregator-2` */
  name: string
  kind: RoleKind
  args: string[]
  env: Record<string, string>
  /** its HTTP port (/health, /metrics; the endpoint: ClickHouse's interface) */
  port: number
}

export interface TopologyPorts {
  /** billing-api's port (PORT); ingest listens one above, the scheduler two above, aggregator i at PORT + 10 + i */
  api: number
  clickhouse: number
}

const service = (name: string) => ['--import', 'tsx', 'scripts/run-service.ts', name]

export function endpointRole(ports: TopologyPorts, faults: boolean): Role {
  return {
    name: 'clickhouse-endpoint', kind: 'clickhouse-endpoint', port: ports.clickhouse,
    args: ['--import', 'tsx', 'scripts/clickhouse-endpoint.ts'],
    env: { CLICKHOUSE_ENDPOINT_PORT: String(ports.clickhouse), CLICKHOUSE_ENDPOINT_FAULTS: String(faults) },
  }
}

export function aggregatorRole(ports: TopologyPorts, index: number): Role {
  const port = ports.api + 10 + index
  return { name: `aggregator-${index}`, kind: 'aggregator', port, args: service('aggregator'), env: { PORT: String(port) } }
}

/** The roles after the endpoint, in start order (the stop order is the reverse, ingest first: supervisor.ts). */
export function serviceRoles(ports: TopologyPorts, aggregators: number): Role[] {
  return [
    { name: 'ingest', kind: 'ingest', port: ports.api + 1, args: service('ingest'), env: { PORT: String(ports.api + 1) } },
    ...Array.from({ length: aggregators }, (_, i) => aggregatorRole(ports, i + 1)),
    {
      name: 'billing-api', kind: 'billing-api', port: ports.api, args: service('billing-api'),
      // one base URL for the whole API: billing-api passes the ingest routes on to ingest
      env: { PORT: String(ports.api), INGEST_FORWARD_URL: `http://127.0.0.1:${ports.api + 1}` },
    },
    { name: 'scheduler', kind: 'scheduler', port: ports.api + 2, args: service('scheduler'), env: { PORT: String(ports.api + 2) } },
  ]
}
