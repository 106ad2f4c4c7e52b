// The five routes of a catalog resource (create, list, get, update, archive) with one shape:
// the scope comes from the API key, the body and query are validated by their JSON schemas,
// create answers 201 and archive 204 unless the resource says otherwise (the spec fixes neither
// status; a resource whose Flexprice operation answers 200, or a delete with a body, says so, so
// that Flexprice's SDK accepts the answer). Resources with other routes register those beside it.
// A listed resource is also searchable: POST <path>/search takes the list's filters as a JSON
// body (the form Flexprice's SDK sends) and answers the same page.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { scopeOf } from './request-auth.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { idParams, listResponse, type Page } from './schemas.js'
import { deletedMessage, noContent, pageOf, ref } from './response-schemas.js'
import { READS } from './route-access.js'

type Listed<T> = { items: T[]; total: number } | [T[], number]

export interface CrudResource<T, Create, Update, Filter extends Page> {
  /** collection path under /v1, e.g. `/coupons` */
  path: string
  tags: string[]
  serialize: (record: T) => unknown
  /** $id of the resource's response schema (http/response-schemas.ts) */
  schema: string
  create?: { body: object; run: (em: EntityManager, scope: Scope, userId: string, input: Create) => Promise<T> }
  list?: { query: object; run: (em: EntityManager, scope: Scope, filter: Filter) => Promise<Listed<T>> }
  get?: (em: EntityManager, scope: Scope, id: string) => Promise<T>
  update?: { body: object; run: (em: EntityManager, scope: Scope, userId: string, id: string, input: Update) => Promise<T> }
  archive?: (em: EntityManager, scope: Scope, userId: string, id: string) => Promise<unknown>
  /** the status of a create: 201 unless given */
  created?: 200 | 201
  /**
   * what an archive answers: `none` 204 without a body (the default), `message` 200
   * `{message}`, `record` 200 with the record as the archive left it
   */
  archived?: 'none' | 'message' | 'record'
}

// The helper is generic over its resources: each registration pairs a body/query schema with the
// input type its use case takes, and Fastify has validated the request against that schema
// before the handler runs, so the casts below are the one place that pairing is asserted.
const idOf = (request: FastifyRequest) => (request.params as { id: string }).id

export function registerCrudRoutes<T, Create, Update, Filter extends Page>(
  app: FastifyInstance, ctx: BillingContext, r: CrudResource<T, Create, Update, Filter>,
): void {
  const { path, tags, serialize } = r
  const one = ref(r.schema)
  const em = () => ctx.orm.em.fork()
  const { create, list, get, update, archive } = r
  const created = r.created ?? 201
  const archived = r.archived ?? 'none'

  if (create) {
    app.post(path, { schema: { tags, body: create.body, response: { [created]: one } } }, async (request, reply) => {
      const record = await create.run(em(), scopeOf(request), request.auth.userId, request.body as Create)
      return reply.code(created).send(serialize(record))
    })
  }
  if (list) {
    const page = async (request: FastifyRequest, filter: Filter) => {
      const listed = await list.run(em(), scopeOf(request), filter)
      const { items, total } = Array.isArray(listed) ? { items: listed[0], total: listed[1] } : listed
      return listResponse(items.map(serialize), total, filter)
    }
    app.get(path, { schema: { tags, querystring: list.query, response: { 200: pageOf(one) } } }, async (request) => page(request, request.query as Filter))
    app.post(`${path}/search`, { config: READS, schema: { tags, body: list.query, response: { 200: pageOf(one) } } }, async (request) => page(request, request.body as Filter))
  }
  if (get) {
    app.get(`${path}/:id`, { schema: { tags, params: idParams, response: { 200: one } } }, async (request) => serialize(await get(em(), scopeOf(request), idOf(request))))
  }
  if (update) {
    app.put(`${path}/:id`, { schema: { tags, params: idParams, body: update.body, response: { 200: one } } }, async (request) => {
      return serialize(await update.run(em(), scopeOf(request), request.auth.userId, idOf(request), request.body as Update))
    })
  }
  if (archive) {
    if (archived === 'record' && !get) throw new Error(`${path}: an archive that answers the record needs get`)
    const response = archived === 'none' ? { 204: noContent } : { 200: archived === 'record' ? one : deletedMessage }
    app.delete(`${path}/:id`, { schema: { tags, params: idParams, response } }, async (request, reply) => {
      const scope = scopeOf(request)
      const id = idOf(request)
      if (archived === 'record') {
        // the same unit of work: the record read is the instance the archive changes
        const m = em()
        const record = await get!(m, scope, id)
        await archive(m, scope, request.auth.userId, id)
        return reply.code(200).send(serialize(record))
      }
      await archive(em(), scope, request.auth.userId, id)
      return archived === 'none' ? reply.code(204).send() : reply.code(200).send({ message: `${id} deleted` })
    })
  }
}
