// Rows a billing batch only reads, as plain objects: one SQL statement per find, built by the
// ORM's query builder from the same filter an `em.find` takes, and mapped by its result mapper
// (timestamps to Dates, booleans, the column names to properties), so a row has the very values
// an entity of the same row has. What it skips is the entity: no instance, no identity map, no
// unit-of-work registration, nothing for `flush` to compare or `clear` to detach. The profile of
// a billing day showed the ORM's creation and hydration of the batch's ~2,400 entities (200
// subscriptions, 2,000 line items, customers, coupons) as 10-15 % of the run (docs/benchmarks.md).
// For reads whose rows are never changed through the unit of work.
import type { EntityName, FilterQuery, LockMode, QueryOrderMap } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'

export interface PlainFindOptions<T> {
  orderBy?: QueryOrderMap<T>
  limit?: number
  lockMode?: LockMode
  /** columns to read (default all) */
  fields?: (keyof T & string)[]
}

/** `em.find(entity, where, options)` without entities: plain rows, in the caller's transaction if any. */
export async function plainFind<T extends object>(em: EntityManager, entity: EntityName<T>, where: FilterQuery<T>, opts: PlainFindOptions<T> = {}): Promise<T[]> {
  const qb = em.createQueryBuilder(entity).select(opts.fields ?? '*').where(where)
  if (opts.orderBy) qb.orderBy(opts.orderBy)
  if (opts.limit !== undefined) qb.limit(opts.limit)
  if (opts.lockMode !== undefined) qb.setLockMode(opts.lockMode)
  return (await qb.execute('all', true)) as unknown as T[]
}
