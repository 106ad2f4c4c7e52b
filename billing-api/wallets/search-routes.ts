// The wallet routes Flexprice's SDK calls beside ours: search of wallets and of ledger rows, the
// wallet's balance read, and PUT /wallets/{id} for what describes a wallet.
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { idListSchema, idParams, listResponse, metadataSchema, paginationQuery } from '../http/schemas.js'
import { READS } from '../http/route-access.js'
import { alwaysNull, objectOf, pageOf, ref } from '../http/response-schemas.js'
import { typed } from '../http/typed-routes.js'
import { searchTransactions } from './ledger.js'
import { serializeTransaction, serializeWallet } from './serialize.js'
import { getWallet, pageWallets, updateWallet } from './service.js'
import { TRANSACTION_TYPES } from './wallet.entity.js'
import type { WalletView } from './wallet-rows.js'
import { walletSchema } from './response-schemas.js'

const tags = ['wallets']
const id = { type: 'string', minLength: 1, maxLength: 100 } as const
const wire = (v: WalletView) => serializeWallet(v.wallet, v.balance)

const updateBody = {
  type: 'object',
  additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1, maxLength: 255 }, description: { type: ['string', 'null'], maxLength: 1000 }, metadata: metadataSchema },
} as const

const walletSearchBody = { type: 'object', additionalProperties: false, properties: { ...paginationQuery, wallet_ids: idListSchema, customer_id: id } } as const

const transactionSearchBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...paginationQuery,
    id,
    wallet_id: id,
    type: { type: 'string', enum: TRANSACTION_TYPES },
    transaction_reason: { type: 'string', minLength: 1, maxLength: 50 },
  },
} as const

/** The wallet as GET /wallets/{id} shows it, plus Flexprice's real-time figures, which are not computed per wallet here. */
const balanceSchema = objectOf({
  ...(walletSchema.properties as Record<string, Record<string, unknown>>),
  real_time_balance: alwaysNull,
  real_time_credit_balance: alwaysNull,
  balance_updated_at: alwaysNull,
  current_period_usage: alwaysNull,
  unpaid_invoices_amount: alwaysNull,
})

export function walletSearchRoutes(instance: FastifyInstance, ctx: BillingContext): void {
  const app = typed(instance)
  const em = () => ctx.orm.em.fork()

  app.put('/wallets/:id', { schema: { response: { 200: ref('Wallet') }, tags, params: idParams, body: updateBody } }, async (request) => {
    return wire(await updateWallet(em(), ctx.clock, scopeOf(request), request.auth.userId, request.params.id, request.body))
  })

  app.get('/wallets/:id/balance/real-time', { schema: { response: { 200: balanceSchema }, tags, params: idParams } }, async (request) => {
    const view = await getWallet(em(), ctx.clock, scopeOf(request), request.params.id)
    return { ...wire(view), real_time_balance: null, real_time_credit_balance: null, balance_updated_at: null, current_period_usage: null, unpaid_invoices_amount: null }
  })

  app.post('/wallets/search', { config: READS, schema: { response: { 200: pageOf(ref('Wallet')) }, tags, body: walletSearchBody } }, async (request) => {
    const q = request.body
    const { items, total } = await pageWallets(em(), ctx.clock, scopeOf(request), q)
    return listResponse(items.map(wire), total, q)
  })

  app.post('/wallets/transactions/search', { config: READS, schema: { response: { 200: pageOf(ref('WalletTransaction')) }, tags, body: transactionSearchBody } }, async (request) => {
    const q = request.body
    const { items, total } = await searchTransactions(em(), scopeOf(request), q as Parameters<typeof searchTransactions>[2])
    return listResponse(items.map(serializeTransaction), total, q)
  })
}
