// Flexprice's reads of a customer's wallets (bare arrays, customer-wallets.ts) and wallet
// termination (terminate.ts).
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { idParams } from '../http/schemas.js'
import { ref } from '../http/response-schemas.js'
import { typed } from '../http/typed-routes.js'
import { customerWallets } from './customer-wallets.js'
import { serializeWallet } from './serialize.js'
import { terminateWallet } from './terminate.js'
import type { WalletView } from './wallet-rows.js'

const tags = ['wallets']
const id = { type: 'string', minLength: 1, maxLength: 100 } as const
const wire = (v: WalletView) => serializeWallet(v.wallet, v.balance)
const walletArray = { type: 'array', items: ref('Wallet') }

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
  },
} as const

export function customerWalletRoutes(instance: FastifyInstance, ctx: BillingContext): void {
  const app = typed(instance)
  const em = () => ctx.orm.em.fork()

  app.get('/customers/:id/wallets', { schema: { response: { 200: walletArray }, tags, params: idParams } }, async (request) => {
    return (await customerWallets(em(), ctx.clock, scopeOf(request), { id: request.params.id })).map(wire)
  })

  app.get('/customers/wallets', { schema: { response: { 200: walletArray }, tags, querystring: customerWalletsQuery } }, async (request) => {
    const { id: customerId, lookup_key } = request.query
    return (await customerWallets(em(), ctx.clock, scopeOf(request), { id: customerId, lookup_key })).map(wire)
  })

  app.post('/wallets/:id/terminate', { schema: { response: { 200: ref('Wallet') }, tags, params: idParams } }, async (request) => {
    return wire(await terminateWallet(em(), ctx.clock, scopeOf(request), request.auth.userId, request.params.id))
  })
}
