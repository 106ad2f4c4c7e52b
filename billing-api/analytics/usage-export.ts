// The usage analytics export: CSV, one row per (customer, meter, value of the meter's declared
// group_by), for every customer of the environment (or those named), with the customer's
// external id, name and the metadata fields asked for. Customers with no usage of a meter get
// a row with 0. Streamed: customers are read in pages of USAGE_EXPORT_PAGE_SIZE by id (keyset),
// each page's usage in one statement per meter, and a page is written before the next is read;
// no row cap. Large exports log their progress every PROGRESS_EVERY rows.
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import type { BillingContext } from '../context.js'
import { CustomerSchema, type Customer } from '../customers/customer.entity.js'
import type { Scope } from '../db/scope.js'
import { toReportingUnit } from '../features/index.js'
import { csvChunks, type CsvValue } from '../http/csv.js'
import { MeterSchema, type Meter } from '../meters/meter.entity.js'
import { meterValue, usageByCustomer, usageReader } from '../meters/index.js'
import { reportingFeatures } from './meter-analytics.js'

export interface UsageExportRequest {
  start_time: string
  end_time: string
  meter_ids?: string[]
  external_customer_ids?: string[]
  metadata_fields?: string[]
}

export const PROGRESS_EVERY = 100_000

const FIXED_COLUMNS = ['external_customer_id', 'customer_name'] as const
const USAGE_COLUMNS = ['meter_id', 'meter_name', 'group_by', 'group_value', 'value', 'event_count', 'reported_value', 'reported_unit'] as const

export interface UsageExport {
  header: string[]
  chunks: AsyncGenerator<string>
}

/** Validates the request (so errors are ErrorResponses before any byte is sent), then streams. */
export async function usageExport(
  ctx: BillingContext, em: EntityManager, scope: Scope, req: UsageExportRequest, log: (msg: string, fields: Record<string, unknown>) => void,
  progressEvery = PROGRESS_EVERY,
): Promise<UsageExport> {
  const start = new Date(req.start_time)
  const end = new Date(req.end_time)
  if (!(start < end)) throw new ValidationError('start_time must be before end_time', 'start_time')
  const meters = await em.find(MeterSchema, { ...scope, status: 'published', ...(req.meter_ids ? { id: { $in: req.meter_ids } } : {}) }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const missing = (req.meter_ids ?? []).find((id) => !meters.some((m) => m.id === id))
  if (missing) throw new ValidationError(`meter_ids: meter ${missing} not found`, 'meter_ids')
  const fields = req.metadata_fields ?? []
  const header = [...FIXED_COLUMNS, ...fields.map((f) => `metadata.${f}`), ...USAGE_COLUMNS]
  const features = await reportingFeatures(em, scope, meters.map((m) => m.id))
  const pageSize = ctx.config.usageExportPageSize
  const reportedColumns = (value: string, meter: Meter): CsvValue[] => {
    const r = toReportingUnit(value, features.get(meter.id)?.reporting_unit ?? null)
    return [r?.value, r?.unit]
  }

  async function* customerPages(): AsyncGenerator<Customer[]> {
    let after = ''
    for (;;) {
      const page = await em.fork().find(CustomerSchema, {
        ...scope, status: { $ne: 'deleted' }, id: { $gt: after }, ...(req.external_customer_ids ? { external_id: { $in: req.external_customer_ids } } : {}),
      }, { orderBy: { id: 'asc' }, limit: pageSize })
      if (page.length === 0) return
      yield page
      if (page.length < pageSize) return
      after = page[page.length - 1].id
    }
  }

  async function rowsOf(customers: Customer[], meter: Meter): Promise<Map<string, CsvValue[][]>> {
    const property = meter.aggregation.group_by ?? null
    const agg = meter.aggregation.type
    const usage = await usageByCustomer(usageReader(ctx), {
      tenantId: scope.tenant_id, environmentId: scope.environment_id, meterId: meter.id, aggregation: agg, declaredGroupBy: property,
      groupBy: property ? [property] : undefined, start, end,
    }, customers.map((c) => c.external_id))
    const out = new Map<string, CsvValue[][]>()
    for (const r of usage) {
      const value = meterValue(meter, r.value, r.event_count)
      const row = [meter.id, meter.name, property, property ? r.groups[property] : null, value, r.event_count, ...reportedColumns(value, meter)]
      out.set(r.customer!, [...(out.get(r.customer!) ?? []), row])
    }
    return out
  }

  async function* pages(): AsyncGenerator<CsvValue[][]> {
    let rows = 0
    let customers = 0
    for await (const page of customerPages()) {
      const byMeter = await Promise.all(meters.map((m) => rowsOf(page, m)))
      const out: CsvValue[][] = []
      for (const c of page) {
        const lead: CsvValue[] = [c.external_id, c.name, ...fields.map((f) => c.metadata?.[f])]
        meters.forEach((m, i) => {
          const usage = byMeter[i].get(c.external_id)
          if (usage) for (const u of usage) out.push([...lead, ...u])
          else out.push([...lead, m.id, m.name, m.aggregation.group_by ?? null, null, '0', 0, ...reportedColumns('0', m)])
        })
      }
      customers += page.length
      const before = rows
      rows += out.length
      if (Math.floor(rows / progressEvery) > Math.floor(before / progressEvery)) log('usage export progress', { rows, customers })
      yield out
    }
    if (rows >= progressEvery) log('usage export done', { rows, customers })
  }

  return { header, chunks: csvChunks(header, pages()) }
}
