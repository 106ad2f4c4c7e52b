// Lookup keys: the stable, human-chosen handle of a catalog record, unique per environment
// among records that are not deleted (archived records keep theirs).
import type { EntitySchema, FilterQuery } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError } from '../../platform/errors.js'
import type { Scope } from './scope.js'
import type { BaseRecord } from './common.js'

/** Leaves room for a "_NNN" suffix within the 255 characters of catalog-schemas' lookupKeySchema. */
const MAX_SLUG = 240

/** "API Calls" -> "api_calls"; accents are dropped ("Café" -> "cafe"); empty when nothing is left. */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_SLUG)
    .replace(/_+$/, '')
}

type Keyed = BaseRecord & { lookup_key: string | null }

export async function assertLookupKeyFree<T extends Keyed>(
  em: EntityManager, schema: EntitySchema<T>, scope: Scope, key: string, label: string,
): Promise<void> {
  const taken = await em.count(schema, { ...scope, lookup_key: key, status: { $ne: 'deleted' } } as FilterQuery<T>)
  if (taken > 0) throw new AlreadyExistsError(`a ${label} with lookup_key ${key} already exists`)
}

/** `base` if free, else the first free of base_2, base_3, ... */
export async function firstFreeLookupKey<T extends Keyed>(em: EntityManager, schema: EntitySchema<T>, scope: Scope, base: string): Promise<string> {
  const escaped = base.replace(/[\\%_]/g, (c) => `\\${c}`)
  const rows = (await em.find(schema, {
    ...scope,
    status: { $ne: 'deleted' },
    $or: [{ lookup_key: base }, { lookup_key: { $like: `${escaped}\\_%` } }],
  } as unknown as FilterQuery<T>)) as T[]
  const taken = new Set(rows.map((r) => r.lookup_key))
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) if (!taken.has(`${base}_${n}`)) return `${base}_${n}`
}
