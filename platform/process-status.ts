// The platform's processes as the console's health page shows them: with the processes topology
// the supervisor's topology.json (scripts/topology/supervisor.ts) names every role, and each
// answers /health and /metrics on its port; the all-in-one process is the only one. Open like
// /health and /metrics: process figures, no tenant's data.
import type { FastifyInstance } from 'fastify'
import { readTopology } from './topology-file.js'

interface ListedProcess { name: string; kind: string; pid?: number; port: number; state: string; restarts: number; startedAt?: string; lastExit?: string }

const processSchema = {
  type: 'object',
  required: ['name', 'kind', 'pid', 'port', 'state', 'restarts', 'healthy', 'started_at', 'last_exit'],
  properties: {
    name: { type: 'string' }, kind: { type: 'string' }, pid: { type: ['integer', 'null'] }, port: { type: 'integer' },
    state: { type: 'string' }, restarts: { type: 'integer' }, healthy: { type: 'boolean' },
    started_at: { type: ['string', 'null'] }, last_exit: { type: ['string', 'null'] },
  },
} as const

export function registerProcessStatus(app: FastifyInstance, opts: { dataDir: string; service: string; port: number; topology: 'processes' | 'all-in-one' }): void {
  const listed = (): ListedProcess[] => {
    // Not under the supervisor (a split deployment): this process alone.
    const supervised = opts.topology === 'processes' ? readTopology(opts.dataDir) : undefined
    if (supervised) return supervised
    return [{ name: opts.service, kind: opts.service, pid: process.pid, port: opts.port, state: 'running', restarts: 0 }]
  }
  const answers = async (p: ListedProcess, path: string): Promise<string | undefined> => {
    if (p.pid === process.pid) return undefined
    try {
      const res = await fetch(`http://127.0.0.1:${p.port}${path}`, { signal: AbortSignal.timeout(1000) })
      return res.ok ? await res.text() : undefined
    } catch {
      return undefined
    }
  }

  app.get('/platform/processes', { schema: { hide: true, response: { 200: { type: 'object', required: ['items'], properties: { items: { type: 'array', items: processSchema } } } } } }, async () => {
    const items = await Promise.all(listed().map(async (p) => ({
      name: p.name, kind: p.kind, pid: p.pid ?? null, port: p.port, state: p.state, restarts: p.restarts,
      healthy: p.pid === process.pid || (await answers(p, p.kind === 'clickhouse-endpoint' ? '/ping' : '/health')) !== undefined,
      started_at: p.startedAt ?? null, last_exit: p.lastExit ?? null,
    })))
    return { items }
  })

  // Every service process's /metrics in one text (counters and histogram buckets add up across processes).
  app.get('/platform/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const own = await app.inject({ method: 'GET', url: '/metrics' })
    const others = await Promise.all(listed().filter((p) => p.kind !== 'clickhouse-endpoint').map((p) => answers(p, '/metrics')))
    void reply.header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
    return [own.body, ...others.filter((t): t is string => t !== undefined)].join('\n')
  })
}
