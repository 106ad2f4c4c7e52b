// Pure steps of the aggregator: match an event to meters and build the ClickHouse rows.
// No I/O here, so every rule (filters, field paths, multiplier, rounding) is unit-testable.
import { Decimal } from 'decimal.js'
import type { IngestBatch, UsageEvent } from '../schemas/events.js'
import type { MeterDefinition } from '../schemas/meters.js'
import { evaluateExpression, parseExpression, type ExpressionArithmetic, type ExpressionNode, type ExpressionResult } from '../schemas/meter-expression.js'

const Dec = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP })
const DECIMAL_TEXT = /^-?\d+(\.\d+)?$/
/** Already a valid Decimal(38, 12) literal: no arithmetic needed (the hot path). */
const PLAIN_VALUE = /^-?\d{1,26}(\.\d{1,12})?$/
/** meter_usage.value is Decimal(38, 12): 26 integer digits, 12 fractional. */
const VALUE_SCALE = 12
const VALUE_LIMIT = new Dec('1e26')
/** Rows with a larger version win a merge; earlier ingestion must win, so count down. */
const VERSION_BASE = 4_102_444_800_000 // 2100-01-01T00:00:00Z in ms

export function dedupVersion(ingestedAtMs: number): number {
  return VERSION_BASE - ingestedAtMs
}

export function meterIndexKey(tenantId: string, environmentId: string, eventName: string): string {
  return `${tenantId}\u0000${environmentId}\u0000${eventName}`
}

export function indexMeters(meters: MeterDefinition[]): Map<string, MeterDefinition[]> {
  const index = new Map<string, MeterDefinition[]>()
  for (const m of meters) {
    const key = meterIndexKey(m.tenant_id, m.environment_id, m.event_name)
    const list = index.get(key)
    if (list) list.push(m)
    else index.set(key, [m])
  }
  return index
}

/** `a.b.c` walks nested objects; a literal key containing dots wins if present. */
export function readProperty(props: Record<string, unknown>, path: string): unknown {
  if (path in props) return props[path]
  let cur: unknown = props
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined
    cur = (cur as Record<string, unknown>)[part]
  }
  return cur
}

function scalarText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v)
}

export function matchesFilters(meter: MeterDefinition, props: Record<string, unknown>): boolean {
  for (const f of meter.filters) {
    const v = readProperty(props, f.key)
    if (v === undefined || v === null || !f.values.includes(scalarText(v))) return false
  }
  return true
}

export type MeterValue =
  | { value: string; text: string }
  | { skip: 'missing_field' | 'non_numeric' | 'out_of_range' | 'inexact' | 'division_by_zero' }

/** A property's exact number: JSON numbers and decimal strings; anything else is non-numeric. */
function numberOf(raw: unknown): Decimal | 'missing_field' | 'non_numeric' | 'inexact' {
  if (raw === undefined || raw === null) return 'missing_field'
  let text: string
  if (typeof raw === 'number' && Number.isFinite(raw)) text = String(raw)
  else if (typeof raw === 'string') text = raw.trim()
  else return 'non_numeric'
  // String(number) may use exponent notation (1e-7); decimal.js reads it exactly.
  if (!DECIMAL_TEXT.test(text) && !(typeof raw === 'number')) return 'non_numeric'
  const n = new Dec(text)
  // Ingest refuses such values (ingest/event-rules.ts); one stored before that rule, or
  // produced by another writer, is skipped and counted rather than rounded silently.
  return n.decimalPlaces() > VALUE_SCALE ? 'inexact' : n
}

/** Expressions compute with 120 significant digits: a product of two Decimal(38, 12) values is exact. */
const ExprDec = Decimal.clone({ precision: 120, rounding: Decimal.ROUND_HALF_UP })
const EXACT: ExpressionArithmetic<Decimal> = {
  literal: (t) => new ExprDec(t),
  add: (a, b) => a.plus(b),
  sub: (a, b) => a.minus(b),
  mul: (a, b) => a.times(b),
  div: (a, b) => a.div(b),
  neg: (a) => a.negated(),
  isZero: (a) => a.isZero(),
}
const parsedExpressions = new Map<string, ExpressionNode>()

function expressionOf(text: string): ExpressionNode {
  let ast = parsedExpressions.get(text)
  if (!ast) {
    ast = parseExpression(text)
    if (parsedExpressions.size > 10_000) parsedExpressions.clear()
    parsedExpressions.set(text, ast)
  }
  return ast
}

/**
 * The value of an expression meter. Any property it reads that is missing or null skips the
 * event for the meter (missing_field), like a missing `field`; a non-numeric one (text, boolean,
 * object) skips it as non_numeric, and a division by zero as division_by_zero. The result is
 * rounded half-up to the 12 decimals of the stored value (only a division can need it).
 */
function expressionValue(expression: string, props: Record<string, unknown>): ExpressionResult<Decimal> {
  return evaluateExpression<Decimal>(expressionOf(expression), (name) => {
    const n = numberOf(readProperty(props, name))
    return typeof n === 'string' ? { skip: n } : { value: n }
  }, EXACT)
}

export function meterValue(meter: MeterDefinition, props: Record<string, unknown>): MeterValue {
  const { type, field, multiplier, expression } = meter.aggregation
  if (type === 'COUNT') return { value: '1', text: '' }
  let n: Decimal
  if (expression) {
    const v = expressionValue(expression, props)
    if ('skip' in v) return v
    n = v.value
  } else {
    const raw = field ? readProperty(props, field) : undefined
    if (raw === undefined || raw === null) return { skip: 'missing_field' }
    if (type === 'COUNT_UNIQUE') return { value: '1', text: scalarText(raw) }
    if (!multiplier && typeof raw === 'string' && PLAIN_VALUE.test(raw.trim())) return { value: raw.trim(), text: '' }
    if (!multiplier && typeof raw === 'number' && PLAIN_VALUE.test(String(raw))) return { value: String(raw), text: '' }
    const read = numberOf(raw)
    if (typeof read === 'string') return { skip: read }
    n = read
  }
  if (multiplier) n = n.times(multiplier)
  n = n.toDecimalPlaces(VALUE_SCALE, Decimal.ROUND_HALF_UP)
  if (n.abs().gte(VALUE_LIMIT)) return { skip: 'out_of_range' }
  return { value: n.toFixed(), text: '' }
}

export function parseProperties(event: UsageEvent): Record<string, unknown> {
  try {
    const p: unknown = JSON.parse(event.properties)
    return p && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, unknown>) : {}
  } catch {
    // Ingest writes JSON.stringify output, so this is another writer's broken record: it has no
    // properties, and each meter needing a field counts it as skipped (missing_field).
    return {}
  }
}

/** Group value text, as the raw-path SQL reads it: strings as they are, other JSON as its text, missing as ''. */
export function groupValue(props: Record<string, unknown>, key: string): string {
  const v = props[key]
  return v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v)
}

/** UTC month of an epoch-ms instant as yyyymm, the partition of meter_events and meter_buckets. */
export function monthOf(ms: number): number {
  const d = new Date(ms)
  return d.getUTCFullYear() * 100 + d.getUTCMonth() + 1
}

export interface MeterHit {
  meter: MeterDefinition
  value: string
  text: string
}

/** The meters an event counts for, with their values; skips are tallied in `skipped`. */
export function meterHits(
  index: Map<string, MeterDefinition[]>, tenantId: string, environmentId: string, e: UsageEvent, skipped: Record<string, number>,
): { hits: MeterHit[]; props: Record<string, unknown> } | null {
  const meters = index.get(meterIndexKey(tenantId, environmentId, e.event_name))
  if (!meters) return null
  const props = parseProperties(e)
  const hits: MeterHit[] = []
  for (const m of meters) {
    if (!matchesFilters(m, props)) continue
    const v = meterValue(m, props)
    if ('skip' in v) skipped[v.skip] = (skipped[v.skip] ?? 0) + 1
    else hits.push({ meter: m, value: v.value, text: v.text })
  }
  return { hits, props }
}

/** Row of events_raw. DateTime64(3) columns take epoch milliseconds as numbers. */
export function rawRow(batch: IngestBatch, e: UsageEvent): unknown[] {
  return [
    batch.tenant_id, batch.environment_id, e.event_id, e.event_name, e.external_customer_id, e.customer_id ?? '',
    e.timestamp, e.source ?? '', e.properties, batch.ingested_at, dedupVersion(batch.ingested_at),
  ]
}

function groupValues(hit: MeterHit, props: Record<string, unknown>): string[] {
  const groupBy = hit.meter.aggregation.group_by
  return groupBy ? [groupValue(props, groupBy)] : []
}

/** Row of meter_events. */
export function meterEventRow(batch: IngestBatch, e: UsageEvent, hit: MeterHit, props: Record<string, unknown>): unknown[] {
  return [
    batch.tenant_id, batch.environment_id, hit.meter.id, e.external_customer_id, e.timestamp, e.event_id, hit.value, hit.text,
    e.source ?? '', groupValues(hit, props), batch.ingested_at,
  ]
}

const NO_LATEST = [0, '', '0']

/** Row of meter_buckets: one event's contribution to its minute bucket (merges fold them). */
export function bucketRow(batch: IngestBatch, e: UsageEvent, hit: MeterHit, props: Record<string, unknown>): unknown[] {
  const type = hit.meter.aggregation.type
  return [
    batch.tenant_id, batch.environment_id, hit.meter.id, e.external_customer_id, Math.floor(e.timestamp / 60_000) * 60,
    groupValues(hit, props), e.source ?? '',
    hit.value, 1, hit.value,
    type === 'LATEST' || type === 'WEIGHTED_SUM' ? [e.timestamp, e.event_id, hit.value] : NO_LATEST,
    type === 'COUNT_UNIQUE' ? [hit.text] : [],
    '',
    type === 'WEIGHTED_SUM' ? [[e.timestamp, e.event_id, hit.value]] : [],
    '',
  ]
}
