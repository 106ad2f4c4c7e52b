// The generic `filters` of POST /invoices/search (spec: list of {field, value}). Pure: each
// filter becomes one SQL condition with bound parameters; fields are whitelisted and typed, so
// no caller text reaches the SQL but as a parameter.
//
// value carries exactly one of array (strings), boolean, date, number, string. operator is ours
// (the spec names none): eq, ne, in, gt, gte, lt, lte; default `in` for an array, else `eq`.
// - text fields: eq/ne with a string, in with an array
// - amount and integer fields: every operator but in, with a number or a decimal string
//   (compared as numeric in SQL, so no float reaches the comparison)
// - date fields: every operator but in, with a date or a date-time string
// - metadata.<key>: eq/ne with a string or boolean (compared as text), in with an array
import { ValidationError } from '../../platform/errors.js'
import { D } from '../pricing/index.js'

const TEXT_FIELDS = ['invoice_status', 'payment_status', 'invoice_type', 'billing_reason', 'currency', 'customer_id', 'subscription_id', 'invoice_number', 'billing_period'] as const
const NUMBER_FIELDS = ['subtotal', 'total', 'total_discount', 'total_tax', 'amount_due', 'amount_paid', 'amount_remaining', 'overpaid_amount', 'refunded_amount', 'billing_sequence'] as const
const DATE_FIELDS = ['created_at', 'updated_at', 'period_start', 'period_end', 'issue_date', 'due_date', 'finalized_at', 'paid_at', 'voided_at'] as const
export const FILTER_OPERATORS = ['eq', 'ne', 'in', 'gt', 'gte', 'lt', 'lte'] as const
type Operator = (typeof FILTER_OPERATORS)[number]

export interface FilterValue {
  array?: string[]
  boolean?: boolean
  date?: string
  number?: number | string
  string?: string
}

export interface SearchFilter {
  field: string
  operator?: Operator
  value: FilterValue
}

export const searchFilterSchema = {
  type: 'array',
  maxItems: 20,
  items: {
    type: 'object',
    required: ['field', 'value'],
    additionalProperties: false,
    properties: {
      field: { type: 'string', minLength: 1, maxLength: 100 },
      operator: { type: 'string', enum: FILTER_OPERATORS },
      value: {
        type: 'object',
        minProperties: 1,
        maxProperties: 1,
        additionalProperties: false,
        properties: {
          array: { type: 'array', maxItems: 1000, items: { type: 'string', maxLength: 255 } },
          boolean: { type: 'boolean' },
          date: { type: 'string', format: 'date-time' },
          number: { anyOf: [{ type: 'number' }, { type: 'string', pattern: '^-?[0-9]{1,20}(\\.[0-9]{1,12})?$' }] },
          string: { type: 'string', maxLength: 1000 },
        },
      },
    },
  },
} as const

const SQL_OP: Record<Exclude<Operator, 'in'>, string> = { eq: '=', ne: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' }

export interface SqlCondition {
  sql: string
  params: unknown[]
}

const includes = <T extends string>(list: readonly T[], v: string): v is T => (list as readonly string[]).includes(v)

/** A number as an exact decimal string: a JSON number is printed back the way it was written. */
function decimalText(v: number | string, field: string): string {
  const text = typeof v === 'number' ? String(v) : v
  try {
    const d = D(text)
    if (!d.isFinite()) throw new Error('not finite')
    return d.toFixed()
  } catch {
    throw new ValidationError(`filters: ${field} needs a number`, 'filters')
  }
}

export function filterCondition(f: SearchFilter, alias = 'i'): SqlCondition {
  const kind = Object.keys(f.value)[0] as keyof FilterValue
  const operator: Operator = f.operator ?? (kind === 'array' ? 'in' : 'eq')
  const bad = (why: string) => new ValidationError(`filters: ${f.field} ${why}`, 'filters')
  const textCondition = (column: string): SqlCondition => {
    if (operator === 'in') {
      if (kind !== 'array') throw bad('with operator in needs value.array')
      return f.value.array!.length === 0 ? { sql: '1 = 0', params: [] } : { sql: `${column} IN (?)`, params: [f.value.array] }
    }
    if (operator !== 'eq' && operator !== 'ne') throw bad(`does not take operator ${operator}`)
    if (kind !== 'string' && kind !== 'boolean') throw bad('needs value.string (or value.array with operator in)')
    return { sql: `${column} ${SQL_OP[operator]} ?`, params: [String(f.value[kind])] }
  }
  if (f.field.startsWith('metadata.') && f.field.length > 'metadata.'.length) {
    // `IS DISTINCT FROM` so `ne` also matches records without the key.
    const cond = textCondition(`${alias}.metadata->>?`)
    return { sql: cond.sql.replace(' <> ', ' IS DISTINCT FROM '), params: [f.field.slice('metadata.'.length), ...cond.params] }
  }
  if (includes(TEXT_FIELDS, f.field)) return textCondition(`${alias}.${f.field}`)
  if (operator === 'in') throw bad('does not take operator in')
  if (includes(NUMBER_FIELDS, f.field)) {
    if (kind !== 'number') throw bad('needs value.number')
    return { sql: `${alias}.${f.field} ${SQL_OP[operator]} ?::numeric`, params: [decimalText(f.value.number!, f.field)] }
  }
  if (includes(DATE_FIELDS, f.field)) {
    const raw = kind === 'date' ? f.value.date! : kind === 'string' ? f.value.string! : null
    const at = raw === null ? null : new Date(raw)
    if (!at || Number.isNaN(at.getTime())) throw bad('needs value.date')
    return { sql: `${alias}.${f.field} ${SQL_OP[operator]} ?`, params: [at] }
  }
  throw new ValidationError(
    `filters: unknown field ${f.field}; one of ${[...TEXT_FIELDS, ...NUMBER_FIELDS, ...DATE_FIELDS].join(', ')} or metadata.<key>`, 'filters',
  )
}

/** Whether the filters name SKIPPED explicitly (then SKIPPED invoices are searched too). */
export function filtersAskForSkipped(filters: readonly SearchFilter[] | undefined): boolean {
  return (filters ?? []).some((f) => f.field === 'invoice_status' && (f.value.string === 'SKIPPED' || (f.value.array ?? []).includes('SKIPPED')) && f.operator !== 'ne')
}
