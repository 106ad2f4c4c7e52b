import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { dateTime, idParams, listResponse, metadataSchema, nonNegativeDecimalString, paginationQuery } from '../http/schemas.js'
import { debitWallet, pageTransactions, topUpWallet, type LedgerResult } from './ledger.js'
import { serializeTransaction, serializeWallet } from './serialize.js'
import { createWallet, getWallet, modifyWallet, pageWallets } from './service.js'
import type { WalletView } from './wallet-rows.js'
import { updateWalletSettings, walletSettingsProperties } from './settings.js'
import { CREDIT_REASONS, WALLET_TYPES } from './wallet.entity.js'
import { typed } from '../http/typed-routes.js'
import { pageOf, ref } from '../http/response-schemas.js'
import { ledgerResultSchema, topUpResultSchema, walletModificationSchema } from './response-schemas.js'
import { walletSearchRoutes } from './search-routes.js'
import { customerWalletRoutes } from './customer-routes.js'
import { FLEXPRICE_CREDIT_REASONS, topUpInput } from './top-up-aliases.js'

const id = { type: 'string', minLength: 1, maxLength: 100 } as const
const idempotencyKey = { type: 'string', minLength: 1, maxLength: 255 } as const
const tags = ['wallets']

const createBody = {
  type: 'object',
  required: ['customer_id', 'currency'],
  additionalProperties: false,
  properties: {
    customer_id: id,
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    name: { type: 'string', minLength: 1, maxLength: 255 },
    wallet_type: { type: 'string', enum: WALLET_TYPES },
    conversion_rate: nonNegativeDecimalString,
    metadata: metadataSchema,
    ...walletSettingsProperties,
    description: { type: 'string', maxLength: 1000 },
    initial_credits_to_load: nonNegativeDecimalString,
  },
} as const

const topUpBody = {
  type: 'object',
  required: ['transaction_reason', 'idempotency_key'],
  additionalProperties: false,
  properties: {
    credits: nonNegativeDecimalString,
    /** credits under Flexprice's name */
    credits_to_add: nonNegativeDecimalString,
    amount: nonNegativeDecimalString,
    transaction_reason: { type: 'string', enum: [...CREDIT_REASONS, ...Object.keys(FLEXPRICE_CREDIT_REASONS)] },
    expiry_date: { anyOf: [dateTime, { type: 'null' }] },
    priority: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    idempotency_key: idempotencyKey,
    metadata: metadataSchema,
  },
} as const

const debitBody = {
  type: 'object',
  required: ['idempotency_key'],
  additionalProperties: false,
  properties: {
    credits: nonNegativeDecimalString,
    amount: nonNegativeDecimalString,
    idempotency_key: idempotencyKey,
    reference: { type: 'string', minLength: 1, maxLength: 255 },
    metadata: metadataSchema,
  },
} as const

const modifyBody = {
  type: 'object',
  required: ['modification_type'],
  additionalProperties: false,
  properties: { modification_type: { type: 'string' } },
} as const

const settingsBody = { type: 'object', additionalProperties: false, minProperties: 1, properties: walletSettingsProperties } as const

const listQuery = { type: 'object', properties: { ...paginationQuery, customer_id: id } } as const
const pageQuery = { type: 'object', properties: { ...paginationQuery } } as const

const wire = (v: WalletView) => serializeWallet(v.wallet, v.balance)
const ledgerWire = (r: LedgerResult) => ({ transaction: serializeTransaction(r.transaction), wallet: wire(r.wallet) })

export async function walletRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  const em = () => ctx.orm.em.fork()
  const walletId = (params: unknown) => (params as { id: string }).id

  // A wallet's create and top-up answer 200, as Flexprice's (the spec fixes neither status).
  app.post('/wallets', { schema: { response: { 200: ref('Wallet') }, tags, body: createBody } }, async (request) => {
    return wire(await createWallet(em(), ctx.clock, scopeOf(request), request.auth.userId, request.body))
  })

  app.get('/wallets', { schema: { response: { 200: pageOf(ref('Wallet')) }, tags, querystring: listQuery } }, async (request) => {
    const q = request.query
    const { items, total } = await pageWallets(em(), ctx.clock, scopeOf(request), q)
    return listResponse(items.map(wire), total, q)
  })

  app.get('/wallets/:id', { schema: { response: { 200: ref('Wallet') }, tags, params: idParams } }, async (request) => {
    return wire(await getWallet(em(), ctx.clock, scopeOf(request), walletId(request.params)))
  })

  app.post('/wallets/:id/top-up', { schema: { response: { 200: topUpResultSchema }, tags, params: idParams, body: topUpBody } }, async (request) => {
    const result = ledgerWire(await topUpWallet(em(), ctx.clock, scopeOf(request), request.auth.userId, walletId(request.params), topUpInput(request.body)))
    return { ...result, wallet_transaction: result.transaction, invoice_id: null }
  })

  app.post('/wallets/:id/debit', { schema: { response: { 201: ledgerResultSchema }, tags, params: idParams, body: debitBody } }, async (request, reply) => {
    const result = await debitWallet(em(), ctx.clock, scopeOf(request), request.auth.userId, walletId(request.params), request.body, ctx)
    return reply.code(201).send(ledgerWire(result))
  })

  app.get('/wallets/:id/transactions', { schema: { response: { 200: pageOf(ref('WalletTransaction')) }, tags, params: idParams, querystring: pageQuery } }, async (request) => {
    const page = request.query
    const { items, total } = await pageTransactions(em(), scopeOf(request), walletId(request.params), page)
    return listResponse(items.map(serializeTransaction), total, page)
  })

  app.put('/wallets/:id/settings', { schema: { response: { 200: ref('Wallet') }, tags, params: idParams, body: settingsBody } }, async (request) => {
    return wire(await updateWalletSettings(em(), ctx.clock, scopeOf(request), request.auth.userId, walletId(request.params), request.body))
  })

  app.post('/wallets/:id/modify', { schema: { response: { 200: walletModificationSchema }, tags, params: idParams, body: modifyBody } }, async (request) => {
    const { modification_type } = request.body
    const { original, updated } = await modifyWallet(em(), ctx.clock, scopeOf(request), request.auth.userId, walletId(request.params), modification_type)
    return { original: wire(original), updated: wire(updated) }
  })

  walletSearchRoutes(instance, ctx)
  customerWalletRoutes(instance, ctx)
}
