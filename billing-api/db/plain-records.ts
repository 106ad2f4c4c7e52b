// Records of an entity schema read as plain objects with one SQL statement: no identity map, no
// entity wrapper. For long-lived caches (the live catalog): an ORM entity keeps its
// EntityManager (identity map, unit of work) alive as long as the entity, about 17 KB per cached
// customer, and hydrating it was most of a cold check's time. The values are what the ORM
// hydrates: every persisted column under its property name, timestamptz as Date, numeric as
// a decimal string (pg's own parsing of numeric), json parsed (live/catalog.test.ts compares
// both for the records the catalog holds).
import type { EntityManager, EntitySchema } from '@mikro-orm/postgresql'

interface Column {
  name: string
  field: string
  type: string
}

const columnsOf = new WeakMap<object, Column[]>()

function columns(em: EntityManager, schema: EntitySchema): Column[] {
  let cols = columnsOf.get(schema)
  if (!cols) {
    const meta = em.getMetadata().get(schema.meta.className)
    cols = meta.props
      .filter((p) => p.persist !== false && p.fieldNames?.length === 1)
      .map((p) => ({ name: p.name, field: p.fieldNames[0]!, type: String(p.type) }))
    columnsOf.set(schema, cols)
  }
  return cols
}

function plain(row: Record<string, unknown>, cols: Column[]): Record<string, unknown> {
  for (const c of cols) {
    const v = row[c.name]
    if (v === null || v === undefined) continue
    if (c.type === 'Date' && !(v instanceof Date)) row[c.name] = new Date(v as string)
    else if (c.type === 'json' && typeof v === 'string') row[c.name] = JSON.parse(v)
  }
  return row
}

/**
 * `SELECT <the schema's columns> FROM <its table> WHERE <where> [ORDER BY <orderBy>]`, with `?`
 * placeholders bound to `params`. `where` and `orderBy` are SQL of the caller's, never input.
 */
export async function plainRecords<T extends object>(
  em: EntityManager, schema: EntitySchema<T>, where: string, params: unknown[], orderBy?: string,
): Promise<T[]> {
  const cols = columns(em, schema as unknown as EntitySchema)
  const meta = em.getMetadata().get(schema.meta.className)
  const select = cols.map((c) => `"${c.field}" AS "${c.name}"`).join(', ')
  const sql = `SELECT ${select} FROM "${meta.tableName}" WHERE ${where}${orderBy ? ` ORDER BY ${orderBy}` : ''}`
  const rows = await em.getConnection().execute<Record<string, unknown>[]>(sql, params)
  return rows.map((r) => plain(r, cols) as T)
}
