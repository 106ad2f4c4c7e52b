// Rows a billing batch only reads, as plain objects: one SQL statement per find, built by the
// ORM's query builder from the same filter an `em.find` takes, and mapped by its result mapper
// (timestamps to Dates, booleans, the column names to properties), so a row has the very values
// an entity of the same row has. What it skips is the entity: no instance, no identity map, no
// unit-of-work registration, nothing for `flush` to compare or `clear` to detach. The profile of
// a billing day showed the ORM's creation and hydration of the batch's ~2,400 entities (200
// subscriptions, 2,000 line items, customers, coupons) as 10-15 % of the run (docs/benchmarks.md).
// For reads whose rows are never changed through the unit of work.
import type { EntityName, FilterQuery, LockMode, QueryOrderMap } from '@mikro-orm/core'
import type { EntityManager, EntitySchema } from '@mikro-orm/postgresql'

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

interface Column {
  name: string
  field: string
  type: string
}

const columnsOf = new WeakMap<object, Column[]>()

function columns(em: EntityManager, schema: EntitySchema): Column[] {
  let cols = columnsOf.get(schema)
  if (!cols) {
    cols = em.getMetadata().get(schema.meta.className).props
      .filter((p) => p.persist !== false && p.fieldNames?.length === 1)
      .map((p) => ({ name: p.name, field: p.fieldNames[0]!, type: String(p.type) }))
    columnsOf.set(schema, cols)
  }
  return cols
}

/**
 * The same plain rows for a long-lived cache on a hot path (the live catalog): `SELECT <the
 * schema's columns> FROM <its table> WHERE <where> [ORDER BY <orderBy>]` as SQL text with `?`
 * placeholders, no query builder (less work per statement; a cached entity would keep its
 * EntityManager alive, about 17 KB a customer). Values as the result mapper gives them:
 * timestamptz as Date, numeric as pg's decimal string, json parsed (compared field for field in
 * live/catalog.test.ts). `where` and `orderBy` are the caller's SQL, never input.
 */
export async function plainSelect<T extends object>(
  em: EntityManager, schema: EntitySchema<T>, where: string, params: unknown[], orderBy?: string,
): Promise<T[]> {
  const cols = columns(em, schema as unknown as EntitySchema)
  const table = em.getMetadata().get(schema.meta.className).tableName
  const select = cols.map((c) => `"${c.field}" AS "${c.name}"`).join(', ')
  const rows = await em.getConnection().execute<Record<string, unknown>[]>(
    `SELECT ${select} FROM "${table}" WHERE ${where}${orderBy ? ` ORDER BY ${orderBy}` : ''}`, params,
  )
  for (const row of rows) {
    for (const c of cols) {
      const v = row[c.name]
      if (v === null || v === undefined) continue
      if (c.type === 'Date' && !(v instanceof Date)) row[c.name] = new Date(v as string)
      else if (c.type === 'json' && typeof v === 'string') row[c.name] = JSON.parse(v)
    }
  }
  return rows as T[]
}
