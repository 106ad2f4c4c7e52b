// The search body shared by the customer and plan searches: a MetadataFilter (spec: Customer)
// whose key/value pairs must all be present in the record's metadata, a record status that
// defaults to published, and pagination.
import type { EntityName, FilterQuery, QueryOrderMap } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Metadata } from '../db/common.js'
import { metadataSchema, paginationQuery, type Page } from './schemas.js'

export const RECORD_STATUSES = ['published', 'deleted', 'archived'] as const
export type RecordStatus = (typeof RECORD_STATUSES)[number]

/** Body properties every search endpoint shares; each domain adds its exact-match fields. */
export const searchBodyProperties = {
  filters: { type: 'object', additionalProperties: false, properties: { metadata: metadataSchema } },
  status: { type: 'string', enum: RECORD_STATUSES, default: 'published' },
  ...paginationQuery,
} as const

export interface SearchInput extends Page {
  filters?: { metadata?: Metadata }
  status?: RecordStatus
}

/** One page of `entity` matching `where` and the metadata filter, with the total count. */
export async function findPage<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  metadata: Metadata | undefined,
  page: Page,
  orderBy: QueryOrderMap<T>,
): Promise<{ items: T[]; total: number }> {
  const qb = em.createQueryBuilder(entity).where(where)
  // jsonb containment matches every pair at once, comparing the values as exact strings.
  if (metadata && Object.keys(metadata).length > 0) qb.andWhere('metadata @> ?::jsonb', [JSON.stringify(metadata)])
  const [items, total] = await qb.orderBy(orderBy).limit(page.limit).offset(page.offset).getResultAndCount()
  return { items, total }
}
