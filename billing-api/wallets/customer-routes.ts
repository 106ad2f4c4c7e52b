// A customer's wallets (customer-wallets.ts; a list, so `{items, pagination}` as every list of
// the spec, where Flexprice's SDK reads a bare array) and wallet termination (terminate.ts).
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { idParams, listResponse, paginationQuery, type Page } from '../http/schemas.js'
import { pageOf, ref } from '../http/response-schemas.js'
import { typed } from '../http/typed-routes.js'
import { customerWallets } from './customer-wallets.js'
import { serializeWallet } from './serialize.js'
import { terminateWallet } from './terminate.js'
import type { WalletView } from './wallet-rows.js'

const tags = ['wallets']
const id = { type: 'string', minLength: 1, maxLength: 100 } as const
const wire = (v: WalletView) => serializeWallet(v.wallet, v.balance)
const walletPage = pageOf(ref('Wallet'))
const pageQuery = { type: 'object', additionalProperties: false, properties: { ...paginationQuery } } as const
const paged = (views: WalletView[], page: Page) => listResponse(views.slice(page.offset, page.offset + page.limit).map(wire), views.length, page)

/**
 * The customer by id or lookup_key (its external_id). The SDK always sends from_cache and
 * include_real_time_balance: reads are never cached here, and the balance is the ledger's, so
 * include_real_time_balance is accepted as false only.
 */
const customerWalletsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id,
    lookup_key: id,
    from_cache: { type: 'boolean' },
    include_real_time_balance: { type: 'boolean', enum: [false] },
    ...paginationQuery,
  },
} as const

export function customerWalletRoutes(instance: FastifyInstance, ctx: BillingContext): void {
  const app = typed(instance)
  const em = () => ctx.orm.em.fork()

  app.get('/customers/:id/wallets', { schema: { response: { 200: walletPage }, tags, params: idParams, querystring: pageQuery } }, async (request) => {
    return paged(await customerWallets(em(), ctx.clock, scopeOf(request), { id: request.params.id }), request.query)
  })

  app.get('/customers/wallets', { schema: { response: { 200: walletPage }, tags, querystring: customerWalletsQuery } }, async (request) => {
    const { id: customerId, lookup_key } = request.query
    return paged(await customerWallets(em(), ctx.clock, scopeOf(request), { id: customerId, lookup_key }), request.query)
  })

  app.post('/wallets/:id/terminate', { schema: { response: { 200: ref('Wallet') }, tags, params: idParams } }, async (request) => {
    return wire(await terminateWallet(em(), ctx.clock, scopeOf(request), request.auth.userId, request.params.id))
  })
}
