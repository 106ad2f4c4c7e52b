// Columns shared by every tenant-owned record (spec: common fields).
import type { EntitySchemaProperty, ExpandProperty, OptionalProps } from '@mikro-orm/core'

export type Metadata = Record<string, string>

/** Columns filled by their defaults, onCreate or the ORM (`version`, where a record has one): em.create need not name them. */
type BaseOptional = 'status' | 'metadata' | 'created_at' | 'updated_at' | 'created_by' | 'updated_by' | 'version'

export interface BaseRecord {
  [OptionalProps]?: BaseOptional
  id: string
  tenant_id: string
  environment_id: string
  status: string
  metadata: Metadata
  created_at: Date
  updated_at: Date
  created_by?: string | null
  updated_by?: string | null
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the columns every entity type shares
type Props = Record<string, Partial<EntitySchemaProperty<any, any>>>

export const baseProperties: Props = {
  id: { type: 'string', primary: true, columnType: 'text' },
  tenant_id: { type: 'string', columnType: 'text' },
  environment_id: { type: 'string', columnType: 'text' },
  status: { type: 'string', columnType: 'text', default: 'published' },
  metadata: { type: 'json', default: '{}' },
  created_at: { type: 'Date', columnType: 'timestamptz', onCreate: () => new Date() },
  // A new record's updated_at is its created_at, to the millisecond.
  updated_at: { type: 'Date', columnType: 'timestamptz', onCreate: (e: { created_at?: Date }) => e.created_at ?? new Date(), onUpdate: () => new Date() },
  created_by: { type: 'string', columnType: 'text', nullable: true },
  updated_by: { type: 'string', columnType: 'text', nullable: true },
}

/** For tenant-wide records (environments, users) that are not scoped to one environment. */
export const tenantWideProperties: Props = Object.fromEntries(
  Object.entries(baseProperties).filter(([k]) => k !== 'environment_id'),
)

export const text = (nullable = false) => ({ type: 'string', columnType: 'text', nullable }) as const
export const timestamp = (nullable = false) => ({ type: 'Date', columnType: 'timestamptz', nullable }) as const
/** numeric columns map to decimal strings, never JS numbers. */
export const decimal = (nullable = false) => ({ type: 'decimal', columnType: 'numeric', nullable }) as const
export const json = (nullable = false) => ({ type: 'json', nullable }) as const
export const integer = (nullable = false) => ({ type: 'integer', nullable }) as const
export const bool = () => ({ type: 'boolean' }) as const

/** The named fields of a record as they are: the plain columns of a serializer, listed once. */
export function pick<T, K extends keyof T>(record: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>
  for (const k of keys) out[k] = record[k]
  return out
}

/** Wire form of the common fields: ISO timestamps, metadata as a string map. */
export function serializeBase(r: BaseRecord) {
  return {
    ...pick(r, ['id', 'tenant_id', 'environment_id', 'status']),
    metadata: r.metadata ?? {},
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    created_by: r.created_by ?? null,
    updated_by: r.updated_by ?? null,
  }
}

export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null)

/**
 * The common columns typed for the entity schema of T: the cast to the schema's property types
 * is made here once, instead of in every entity.
 */
export function baseColumns<T extends BaseRecord>(): { [K in keyof BaseRecord]-?: EntitySchemaProperty<ExpandProperty<NonNullable<T[K]>>, T> } {
  return baseProperties as never
}

/** The same for tenant-wide records (no environment_id). */
export function tenantWideColumns<T extends Omit<BaseRecord, 'environment_id'>>(): { [K in keyof Omit<BaseRecord, 'environment_id'>]-?: EntitySchemaProperty<ExpandProperty<NonNullable<T[K]>>, T> } {
  return tenantWideProperties as never
}
