// Record lookups shared by every billing-api domain.
// Every lookup filters on tenant and environment, so a record of another scope behaves
// exactly like one that does not exist.
import type { EntitySchema } from '@mikro-orm/core'
import type { FilterQuery } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError, NotFoundError, ValidationError } from '../../platform/errors.js'
import type { Scope } from './scope.js'
import type { BaseRecord } from './common.js'

/** A record named in the path: unknown, deleted or out of scope -> 404. Archived records stay readable. */
export async function findInScope<T extends BaseRecord>(em: EntityManager, schema: EntitySchema<T>, scope: Scope, id: string, label: string): Promise<T> {
  const record = await em.findOne(schema, { id, ...scope, status: { $ne: 'deleted' } } as FilterQuery<T>)
  if (!record) throw new NotFoundError(label, id)
  return record
}

/**
 * A record named in a request body: it must exist in scope and be published. An unknown id
 * is bad input (400 naming the field), and an archived record takes no new references.
 */
export async function requireReference<T extends BaseRecord>(
  em: EntityManager, schema: EntitySchema<T>, scope: Scope, id: string, label: string, field: string,
): Promise<T> {
  const record = (await em.findOne(schema, { id, ...scope, status: { $ne: 'deleted' } } as FilterQuery<T>)) as T | null
  if (!record) throw new ValidationError(`${field}: ${label} ${id} not found`, field)
  if (record.status !== 'published') throw new ValidationError(`${field}: ${label} ${id} is ${record.status}`, field)
  return record
}

/** Archived records keep the references they have, but no longer change. */
export function assertChangeable(record: BaseRecord, label: string): void {
  if (record.status !== 'published') throw new InvalidOperationError(`${label} ${record.id} is ${record.status} and cannot be changed`)
}

/** Ends a record's life without removing the row: archived (kept readable) or deleted (gone from reads). */
export async function retireRecord(em: EntityManager, record: BaseRecord, status: 'archived' | 'deleted', userId: string | null): Promise<void> {
  record.status = status
  record.updated_by = userId
  await em.flush()
}

/** The columns every new catalog record starts with: published, with its metadata, by its creator. */
export function publishedBy(userId: string, metadata: Record<string, string> | undefined) {
  return { status: 'published' as const, metadata: metadata ?? {}, created_by: userId, updated_by: userId }
}
