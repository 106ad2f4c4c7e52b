// Starts the production topology on one machine and stops it without losing an event: the
// endpoint, the migrations, then the roles (roles.ts) under a supervisor: ingest and billing-api,
// then the aggregators one after another and the scheduler; on SIGINT/SIGTERM, ingest
// first (its spool drains into Kafka), then billing-api and the scheduler, then the aggregators
// once they have committed everything, the endpoint last.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { PROJECT_ROOT, type Config } from '../../platform/config.js'
import { createKafka } from '../../platform/kafka.js'
import { aggregatorsCaughtUp, consumersHoldPartitions } from './group.js'
import { aggregatorRole, endpointRole, serviceRoles, type Role, type TopologyPorts } from './roles.js'
import { Supervisor } from './supervisor.js'

export interface Topology {
  supervisor: Supervisor
  ports: TopologyPorts
  /** billing-api's and ingest's URLs */
  apiUrl: string
  ingestUrl: string
  clickhouseUrl: string
  /** runs `n` aggregator processes (1-8): new ones join one after another, the last started leave first */
  setAggregators(n: number): Promise<void>
  stop(): Promise<{ caughtUp: boolean }>
}

/** how long the next aggregator waits for the one before to hold partitions */
const JOIN_WAIT_MS = 45_000
/** the admin API's bound on aggregator consumers, here processes */
const MAX_AGGREGATORS = 8

export interface TopologyOptions {
  aggregators: number
  /** the endpoint takes fault rules (tests, chaos) */
  faults?: boolean
  log?: (msg: string) => void
  /** run after the migrations, before the roles start (the demo tenant) */
  beforeRoles?: () => Promise<void>
}

export async function startTopology(config: Config, env: Record<string, string | undefined>, opts: TopologyOptions): Promise<Topology> {
  const log = opts.log ?? ((msg: string) => console.log(`[topology] ${msg}`))
  const ports: TopologyPorts = { api: config.port, clickhouse: config.clickhouseEndpointPort }
  const clickhouseUrl = `http://127.0.0.1:${ports.clickhouse}`
  const roleEnv = { ...env, CLICKHOUSE_URL: clickhouseUrl, HOST: '127.0.0.1', PLATFORM_TOPOLOGY: 'processes', METERLINE_SUPERVISOR_PID: String(process.pid) }
  const supervisor = new Supervisor({ dataDir: config.dataDir, env: roleEnv, log })
  const stop = async () => {
    const names = supervisor.names()
    const of = (kind: string) => names.filter((n) => n === kind || n.startsWith(`${kind}-`))
    await supervisor.stop(of('ingest'), config.shutdownDrainMs + 10_000)
    await supervisor.stop([...of('billing-api'), ...of('scheduler')], 15_000)
    const caughtUp = await aggregatorsCaughtUp(createKafka(config, 'topology-drain'), config.eventsTopic, config.aggregatorGroupId, config.shutdownDrainMs)
    if (!caughtUp) log(`the aggregators had not committed every event after ${config.shutdownDrainMs} ms; the broker keeps the rest until it stops`)
    await supervisor.stop(of('aggregator'), 20_000)
    await supervisor.stop(of('clickhouse-endpoint'), 10_000)
    return { caughtUp }
  }
  const aggregators = () => supervisor.names().filter((n) => n.startsWith('aggregator-')).sort((a, b) => index(a) - index(b))
  const startRole = async (role: Role) => {
    await supervisor.start(role)
    if (role.kind !== 'aggregator') return
    // the next one joins once this one has (members joining together race a rebalance)
    if (!(await consumersHoldPartitions(role.port, JOIN_WAIT_MS))) log(`${role.name} held no partitions after ${JOIN_WAIT_MS / 1000} s; going on`)
  }
  const setAggregators = async (wanted: number) => {
    const n = Math.min(MAX_AGGREGATORS, Math.max(1, Math.floor(wanted)))
    while (aggregators().length < n) {
      const next = Math.max(0, ...aggregators().map(index)) + 1
      log(`starting aggregator-${next} (${n} wanted)`)
      await startRole(aggregatorRole(ports, next))
    }
    while (aggregators().length > n) {
      const last = aggregators().at(-1)!
      log(`stopping ${last} (${n} wanted)`)
      await supervisor.remove([last], 20_000)
    }
  }
  const t0 = Date.now()
  const since = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`
  try {
    await supervisor.start(endpointRole(ports, opts.faults ?? false), '/ping')
    log(`clickhouse-endpoint answers (${since()})`)
    await migrate(roleEnv)
    await opts.beforeRoles?.()
    log(`migrations done (${since()})`)
    // What serves requests first (events are spooled meanwhile), then the aggregators one
    // after another and the scheduler.
    const roles = serviceRoles(ports, opts.aggregators)
    const answering = async (role: Role) => {
      await (role.kind === 'aggregator' ? startRole(role) : supervisor.start(role))
      log(`${role.name} ${role.kind === 'aggregator' ? 'holds partitions' : 'answers'} (${since()})`)
    }
    const inTurn = async () => {
      for (const role of roles.filter((r) => r.kind === 'aggregator')) await answering(role)
    }
    await Promise.all(roles.filter((r) => r.kind === 'billing-api' || r.kind === 'ingest').map(answering))
    await Promise.all([inTurn(), ...roles.filter((r) => r.kind === 'scheduler').map(answering)])
  } catch (err) {
    await stop().catch(() => undefined)
    throw err
  }
  return { supervisor, ports, apiUrl: `http://127.0.0.1:${ports.api}`, ingestUrl: `http://127.0.0.1:${ports.api + 1}`, clickhouseUrl, setAggregators, stop }
}

const index = (name: string) => Number(name.slice('aggregator-'.length))

/** scripts/migrate.ts as its own process, reaching ClickHouse over HTTP like the roles. */
async function migrate(env: Record<string, string | undefined>): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/migrate.ts'], { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: 'inherit' })
  const [code] = (await once(child, 'exit')) as [number | null]
  if (code !== 0) throw new Error(`the migrations failed (exit ${code})`)
}
