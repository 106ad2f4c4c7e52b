// The aggregator consumers of this process, as operators see and change them: how many run,
// which partitions each holds, what each wrote. Wired by the composition root when the process
// runs the aggregator (an extra consumer joins the same group and writes the same database, so
// a rebalance moves partitions and the shard fence moves their shards).
import type { FastifyInstance } from 'fastify'
import { ServiceUnavailableError } from '../../platform/errors.js'
import { typed } from '../http/typed-routes.js'

export interface AggregatorView {
  name: string
  partitions: number[]
  shards: number
  events: number
  writes: number
}

export interface AggregatorControl {
  consumers(): AggregatorView[] | Promise<AggregatorView[]>
  /** starts or stops consumers of this process until `n` run (the first one always stays) */
  setConsumers(n: number): Promise<AggregatorView[]>
}

declare module '../context.js' {
  interface BillingContext {
    /** set where the process runs the aggregator */
    aggregatorControl?: AggregatorControl
  }
}

const viewSchema = {
  type: 'object',
  required: ['name', 'partitions', 'shards', 'events', 'writes'],
  properties: {
    name: { type: 'string' }, partitions: { type: 'array', items: { type: 'integer' } }, shards: { type: 'integer' },
    events: { type: 'integer' }, writes: { type: 'integer' },
  },
  additionalProperties: false,
} as const
const listSchema = { type: 'object', required: ['items'], additionalProperties: false, properties: { items: { type: 'array', items: viewSchema } } } as const
const body = {
  type: 'object', additionalProperties: false, required: ['consumers'],
  properties: { consumers: { type: 'integer', minimum: 1, maximum: 8, description: 'aggregator consumers this process runs (all-in-one), or aggregator processes the supervisor runs (processes topology)' } },
} as const

export function aggregatorRoutes(instance: FastifyInstance, control: () => AggregatorControl | undefined, common: { tags: string[]; security: { [label: string]: string[] }[]; errors: Record<string, unknown> }): void {
  const app = typed(instance)
  const c = (): AggregatorControl => {
    const found = control()
    if (!found) throw new ServiceUnavailableError('this process does not run the aggregator')
    return found
  }
  app.get('/aggregators', {
    schema: { ...common, summary: "the aggregator consumers (this process's, or every aggregator process's): partitions, shards held, events written", response: { 200: listSchema, ...common.errors } },
  }, async () => ({ items: await c().consumers() }))
  app.put('/aggregators', {
    schema: { ...common, summary: 'run this many aggregator consumers in this process, or aggregator processes under the supervisor (a rebalance follows)', body, response: { 200: listSchema, ...common.errors } },
  }, async (request) => ({ items: await c().setConsumers(request.body.consumers) }))
}
