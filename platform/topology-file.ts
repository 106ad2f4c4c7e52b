// The production topology's state on disk, in the data directory: `topology.json`, written by
// the supervisor (scripts/topology/supervisor.ts) whenever a process changes state, read by the
// health page, the admin API, the benches and the tests; beside it `prometheus-targets.json`,
// the same processes as the local Prometheus's file-based discovery reads them (each role's
// /metrics, labelled with its role and process); and `topology-request.json`, the
// operator's wish for the number of aggregator processes (the admin API writes it and signals
// the supervisor with SIGUSR1).
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export type RoleKind = 'clickhouse-endpoint' | 'ingest' | 'aggregator' | 'billing-api' | 'scheduler'

export interface ProcessState {
  name: string
  kind: RoleKind
  pid?: number
  port: number
  state: 'starting' | 'running' | 'restarting' | 'stopped'
  restarts: number
  startedAt?: string
  lastExit?: string
}

export interface AggregatorRequest {
  aggregators: number
  /** who asked when (the supervisor logs it) */
  requestedAt: string
}

/** The processes the supervisor runs, or undefined where none writes the file (all-in-one, a split deployment). */
export function readTopology(dataDir: string): ProcessState[] | undefined {
  try {
    return (JSON.parse(readFileSync(join(dataDir, 'topology.json'), 'utf8')) as { processes: ProcessState[] }).processes
  } catch {
    return undefined
  }
}

export function writeTopology(dataDir: string, processes: ProcessState[]): void {
  writeAtomically(join(dataDir, 'topology.json'), { updatedAt: new Date().toISOString(), processes })
  const scraped = processes.filter((p) => p.kind !== 'clickhouse-endpoint' && p.state !== 'stopped')
  writeAtomically(join(dataDir, 'prometheus-targets.json'), scraped.map((p) => ({ targets: [`127.0.0.1:${p.port}`], labels: { role: p.kind, process: p.name } })))
}

export function readAggregatorRequest(dataDir: string): AggregatorRequest | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, 'topology-request.json'), 'utf8')) as AggregatorRequest
  } catch {
    return undefined
  }
}

export function writeAggregatorRequest(dataDir: string, aggregators: number): void {
  writeAtomically(join(dataDir, 'topology-request.json'), { aggregators, requestedAt: new Date().toISOString() } satisfies AggregatorRequest)
}

function writeAtomically(file: string, value: unknown): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(value, null, 2))
  renameSync(`${file}.tmp`, file)
}
