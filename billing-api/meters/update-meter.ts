// PUT /meters/{id}: what may change once a meter counts events.
//
// Always: name, reset_usage, rounding, metadata (they act where usage is read), and bucket_size
// from HOUR to MINUTE (every hour-aligned time bucket stays valid; MINUTE to HOUR could strand
// minute buckets already on line items, so it is refused).
// What decides how events become bucket values (event_name, aggregation, filters) may change
// only while no raw event with the meter's event name (or the new one) exists: buckets already
// written would otherwise mix two definitions. Such a change is refused with 400
// invalid_operation; create a new meter instead (it backfills from the raw events).
import type { EntityManager } from '@mikro-orm/postgresql'
import type { ClickHouse } from '../../clickhouse/client.js'
import { eventsExist } from '../../clickhouse/queries/meter-has-events.js'
import { InvalidOperationError, ValidationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { BucketSize, Meter, MeterAggregation, MeterFilter, MeterRounding } from './meter.entity.js'
import { checkAggregation, checkRounding } from './meter-rules.js'
import { getMeter } from './service.js'

export interface UpdateMeterInput {
  name?: string
  event_name?: string
  aggregation?: MeterAggregation
  filters?: MeterFilter[]
  reset_usage?: Meter['reset_usage']
  rounding?: MeterRounding | null
  bucket_size?: BucketSize
  metadata?: Record<string, string>
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
const canonical = (a: MeterAggregation) =>
  [a.type, a.field ?? null, a.expression ?? null, a.multiplier ?? null, a.group_by ?? null]

export async function updateMeter(em: EntityManager, ch: ClickHouse, scope: Scope, userId: string, id: string, input: UpdateMeterInput): Promise<Meter> {
  const meter = await getMeter(em, scope, id)
  const eventName = input.event_name === undefined ? meter.event_name : input.event_name.trim()
  if (!eventName) throw new ValidationError('event_name must not be blank', 'event_name')
  const aggregation = input.aggregation === undefined ? meter.aggregation : checkAggregation(input.aggregation)
  const filters = input.filters === undefined ? meter.filters : input.filters.map((f) => ({ key: f.key, values: [...f.values] }))
  const changed = [
    ...(eventName !== meter.event_name ? ['event_name'] : []),
    ...(!same(canonical(aggregation), canonical(meter.aggregation)) ? ['aggregation'] : []),
    ...(!same(filters, meter.filters) ? ['filters'] : []),
  ]
  if (changed.length) {
    for (const name of new Set([meter.event_name, eventName])) {
      if (await eventsExist(ch, { tenantId: scope.tenant_id, environmentId: scope.environment_id, eventName: name })) {
        throw new InvalidOperationError(
          `meter ${meter.id}: ${changed.join(', ')} cannot change once events named "${name}" exist; create a new meter (it counts the existing events) instead`,
        )
      }
    }
  }
  if (input.bucket_size !== undefined && input.bucket_size !== meter.bucket_size && input.bucket_size === 'HOUR') {
    throw new InvalidOperationError(`meter ${meter.id}: bucket_size can change from HOUR to MINUTE only (time buckets on minutes may already use it)`)
  }
  Object.assign(meter, {
    event_name: eventName, aggregation, filters,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.reset_usage !== undefined ? { reset_usage: input.reset_usage } : {}),
    ...(input.rounding !== undefined ? { rounding: checkRounding(input.rounding) } : {}),
    ...(input.bucket_size !== undefined ? { bucket_size: input.bucket_size } : {}),
    ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
    updated_by: userId,
  })
  await em.flush()
  return meter
}
