// POST /invoices/search (spec): the body's JSON schema and the query it builds. SKIPPED
// invoices are left out unless a status filter names SKIPPED (invoice_status, or a generic
// filter on invoice_status). Amount filters take a number or a decimal string and compare as
// numeric in SQL. Generic `filters`: search-filters.ts; `expand`: search-expand.ts. Without `sort`, invoices come newest first (created_at, then id, in
// `order`, default desc); every sort ends with id so pages are stable.
import type { EntityManager } from '@mikro-orm/postgresql'
import { QueryOrder } from '@mikro-orm/core'
import type { Scope } from '../db/scope.js'
import { RECORD_STATUSES, type RecordStatus } from '../http/metadata-filter.js'
import { dateTime, nonNegativeDecimalString, paginationQuery, type Page } from '../http/schemas.js'
import { PAYMENT_STATUSES } from './payment-status.js'
import { InvoiceLineItemSchema, InvoiceSchema, type Invoice, type InvoiceLineItem } from './invoice.entity.js'
import { filterCondition, filtersAskForSkipped, searchFilterSchema, type SearchFilter } from './search-filters.js'

export const BILLING_REASONS = [
  'SUBSCRIPTION_CREATE', 'SUBSCRIPTION_CYCLE', 'SUBSCRIPTION_UPDATE', 'SUBSCRIPTION_TRIAL_END', 'SUBSCRIPTION_TRIAL_START',
  'PRORATION', 'MANUAL', 'AUTO_INVOICE_THRESHOLD', 'WALLET_AUTO_TOPUP',
] as const
export const INVOICE_STATUSES = ['DRAFT', 'FINALIZED', 'VOIDED', 'SKIPPED'] as const
export const INVOICE_TYPES = ['SUBSCRIPTION', 'ONE_OFF', 'CREDIT'] as const
/** Columns a search may sort on. */
export const SORT_FIELDS = [
  'created_at', 'updated_at', 'period_start', 'period_end', 'issue_date', 'due_date', 'finalized_at', 'paid_at',
  'total', 'amount_due', 'amount_remaining', 'invoice_number', 'billing_sequence',
] as const
type SortField = (typeof SORT_FIELDS)[number]
type Direction = 'asc' | 'desc'

const idList = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 100 }, maxItems: 1000 } as const
const direction = { type: 'string', enum: ['asc', 'desc'] } as const
/** A JSON number is accepted too; it is read back as the decimal it was written as. */
const amountBound = { anyOf: [{ type: 'number', minimum: 0 }, nonNegativeDecimalString] } as const

export const invoiceSearchBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    amount_due_gt: amountBound,
    amount_remaining_gt: amountBound,
    billing_reason: { type: 'string', enum: BILLING_REASONS },
    currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
    customer_id: { type: 'string', minLength: 1 },
    external_customer_id: { type: 'string', minLength: 1 },
    expand: { type: 'string', maxLength: 200 },
    filters: searchFilterSchema,
    start_time: dateTime,
    end_time: dateTime,
    invoice_ids: idList,
    invoice_status: { type: 'array', items: { type: 'string', enum: INVOICE_STATUSES }, maxItems: 4 },
    invoice_type: { type: 'string', enum: INVOICE_TYPES },
    payment_status: { type: 'array', items: { type: 'string', enum: PAYMENT_STATUSES }, maxItems: 8 },
    period_start_gte: dateTime,
    period_start_lte: dateTime,
    period_end_gte: dateTime,
    period_end_lte: dateTime,
    skip_line_items: { type: 'boolean', default: false },
    sort: {
      type: 'array',
      maxItems: 5,
      items: {
        type: 'object',
        required: ['field'],
        additionalProperties: false,
        properties: { field: { type: 'string', enum: SORT_FIELDS }, direction },
      },
    },
    order: direction,
    status: { type: 'string', enum: RECORD_STATUSES, default: 'published' },
    subscription_customer_id: idList,
    subscription_id: { type: 'string', minLength: 1 },
    ...paginationQuery,
  },
} as const

export interface InvoiceSearch extends Page {
  amount_due_gt?: string | number
  amount_remaining_gt?: string | number
  billing_reason?: string
  currency?: string
  customer_id?: string
  external_customer_id?: string
  expand?: string
  filters?: SearchFilter[]
  start_time?: string
  end_time?: string
  invoice_ids?: string[]
  invoice_status?: string[]
  invoice_type?: string
  payment_status?: string[]
  period_start_gte?: string
  period_start_lte?: string
  period_end_gte?: string
  period_end_lte?: string
  skip_line_items?: boolean
  sort?: { field: SortField; direction?: Direction }[]
  order?: Direction
  status?: RecordStatus
  subscription_customer_id?: string[]
  subscription_id?: string
}

const nullsLast = (d: Direction) => (d === 'asc' ? QueryOrder.ASC_NULLS_LAST : QueryOrder.DESC_NULLS_LAST)

export async function searchInvoices(
  em: EntityManager, scope: Scope, f: InvoiceSearch,
): Promise<{ items: Invoice[]; total: number; lines: Map<string, InvoiceLineItem[]> | null }> {
  const range = (gte?: string, lte?: string) => ({ ...(gte ? { $gte: new Date(gte) } : {}), ...(lte ? { $lte: new Date(lte) } : {}) })
  const where: Record<string, unknown> = {
    ...scope,
    status: f.status ?? 'published',
    invoice_status: f.invoice_status?.includes('SKIPPED') || filtersAskForSkipped(f.filters)
      ? (f.invoice_status ? { $in: f.invoice_status } : {})
      : { $ne: 'SKIPPED', ...(f.invoice_status ? { $in: f.invoice_status } : {}) },
  }
  if (Object.keys(where.invoice_status as object).length === 0) delete where.invoice_status
  if (f.billing_reason) where.billing_reason = f.billing_reason
  if (f.currency) where.currency = f.currency.toUpperCase()
  if (f.customer_id) where.customer_id = f.customer_id
  if (f.invoice_ids) where.id = { $in: f.invoice_ids }
  if (f.invoice_type) where.invoice_type = f.invoice_type
  if (f.payment_status) where.payment_status = { $in: f.payment_status }
  if (f.subscription_id) where.subscription_id = f.subscription_id
  if (f.start_time || f.end_time) where.created_at = { ...(f.start_time ? { $gte: new Date(f.start_time) } : {}), ...(f.end_time ? { $lt: new Date(f.end_time) } : {}) }
  if (f.period_start_gte || f.period_start_lte) where.period_start = range(f.period_start_gte, f.period_start_lte)
  if (f.period_end_gte || f.period_end_lte) where.period_end = range(f.period_end_gte, f.period_end_lte)

  const qb = em.createQueryBuilder(InvoiceSchema, 'i').where(where)
  if (f.amount_due_gt !== undefined) qb.andWhere('i.amount_due > ?::numeric', [String(f.amount_due_gt)])
  if (f.amount_remaining_gt !== undefined) qb.andWhere('i.amount_remaining > ?::numeric', [String(f.amount_remaining_gt)])
  for (const filter of f.filters ?? []) {
    const c = filterCondition(filter)
    qb.andWhere(c.sql, c.params)
  }
  if (f.external_customer_id) {
    qb.andWhere(
      'i.customer_id IN (SELECT c.id FROM customers c WHERE c.tenant_id = ? AND c.environment_id = ? AND c.external_id = ?)',
      [scope.tenant_id, scope.environment_id, f.external_customer_id],
    )
  }
  // An empty list matches nothing, like the other list filters (`IN ()` is not SQL: it was a 500).
  if (f.subscription_customer_id?.length === 0) qb.andWhere('1 = 0')
  else if (f.subscription_customer_id) {
    qb.andWhere(
      'i.subscription_id IN (SELECT s.id FROM subscriptions s WHERE s.tenant_id = ? AND s.environment_id = ? AND s.customer_id IN (?))',
      [scope.tenant_id, scope.environment_id, f.subscription_customer_id],
    )
  }
  const order = f.order ?? 'desc'
  const sort = f.sort?.length ? f.sort : [{ field: 'created_at' as const, direction: order }]
  const orderBy = [...sort.map((s) => ({ [s.field]: nullsLast(s.direction ?? order) })), { id: nullsLast(sort[sort.length - 1].direction ?? order) }]
  const [items, total] = await qb.orderBy(orderBy).limit(f.limit).offset(f.offset).getResultAndCount()

  if (f.skip_line_items || items.length === 0) return { items, total, lines: f.skip_line_items ? null : new Map() }
  const rows = await em.find(InvoiceLineItemSchema, { ...scope, invoice_id: { $in: items.map((i) => i.id) } }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const lines = new Map<string, InvoiceLineItem[]>()
  for (const l of rows) lines.set(l.invoice_id, [...(lines.get(l.invoice_id) ?? []), l])
  return { items, total, lines }
}
