// The aggregator consumers of the processes topology, as the admin API sees and changes them from
// billing-api: each aggregator process runs its consumers and shows them on its own port
// (`GET /aggregator/consumers`, loopback and hidden like /metrics: partitions and counts, no
// tenant's data); a change of the number asks the supervisor for that many aggregator processes
// (platform/topology-file.ts) and waits until they run and the group has settled.
import type { FastifyInstance } from 'fastify'
import { ServiceUnavailableError } from '../../platform/errors.js'
import { readTopology, writeAggregatorRequest, type ProcessState } from '../../platform/topology-file.js'
import type { AggregatorControl, AggregatorView } from './aggregators.js'

/** how long a change waits for the supervisor's processes to run */
const CHANGE_WAIT_MS = 90_000

/** On a process that runs the aggregator under the supervisor: its consumers, for billing-api. */
export function registerAggregatorView(app: FastifyInstance, control: () => AggregatorControl | undefined): void {
  // while the process starts, no consumers yet (the supervisor asks every 200 ms)
  app.get('/aggregator/consumers', { schema: { hide: true } }, async () => ({ items: (await control()?.consumers()) ?? [] }))
}

export function topologyAggregators(opts: { dataDir: string; supervisorPid: number; partitions: number }): AggregatorControl {
  const aggregatorProcesses = () => (readTopology(opts.dataDir) ?? []).filter((p) => p.kind === 'aggregator')
  const consumers = async (): Promise<AggregatorView[]> => {
    const views = await Promise.all(aggregatorProcesses().map(consumersOf))
    return views.flat()
  }
  return {
    consumers,
    async setConsumers(n) {
      writeAggregatorRequest(opts.dataDir, n)
      try {
        process.kill(opts.supervisorPid, 'SIGUSR1')
      } catch {
        throw new ServiceUnavailableError('the topology supervisor is not running')
      }
      const deadline = Date.now() + CHANGE_WAIT_MS
      for (;;) {
        const ps = aggregatorProcesses()
        const perProcess = ps.length === n && ps.every((p) => p.state === 'running') ? await Promise.all(ps.map(consumersOf)) : []
        if (settled(n, opts.partitions, perProcess)) return perProcess.flat()
        if (Date.now() > deadline) throw new ServiceUnavailableError(`the aggregator processes did not settle at ${n} within ${CHANGE_WAIT_MS / 1000} s`)
        await new Promise((r) => setTimeout(r, 250))
      }
    },
  }
}

/**
 * `n` processes each running its consumers, the topic's partitions each held once, and every
 * consumer holding some while there are no more consumers than partitions. A process that
 * serves but has not started its consumers yet answers none: not settled.
 */
export function settled(n: number, partitions: number, perProcess: AggregatorView[][]): boolean {
  const views = perProcess.flat()
  const held = views.flatMap((v) => v.partitions)
  const eachOnce = held.length === partitions && new Set(held).size === partitions
  return perProcess.length === n && perProcess.every((consumers) => consumers.length > 0) && eachOnce &&
    (views.length > partitions || views.every((v) => v.partitions.length > 0))
}

async function consumersOf(p: ProcessState): Promise<AggregatorView[]> {
  try {
    const res = await fetch(`http://127.0.0.1:${p.port}/aggregator/consumers`, { signal: AbortSignal.timeout(2000) })
    if (res.ok) return ((await res.json()) as { items: AggregatorView[] }).items
  } catch {
    // restarting: shown without partitions
  }
  return [{ name: p.name, partitions: [], shards: 0, events: 0, writes: 0 }]
}
