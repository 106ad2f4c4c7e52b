// Links between our entities and provider records (POST /v1/integrations/link, and every
// successful push). One link per entity and provider, and one entity per provider record.
// Customer links are also written to customer_integrations, the spec's CustomerIntegration
// that the customer response lists.
import type { EntitySchema } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { serializeBase, type BaseRecord } from '../db/common.js'
import { InvoiceSchema } from '../invoices/invoice.entity.js'
import { SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { EntityIntegrationMappingSchema, type EntityIntegrationMapping } from './entities.js'
import type { MappedEntityType } from '../queues.js'

export const MAPPED_ENTITY_TYPES: MappedEntityType[] = ['customer', 'invoice', 'subscription']

export interface LinkInput {
  entity_type: MappedEntityType
  entity_id: string
  provider: string
  provider_entity_id: string
}

const SCHEMAS = { customer: CustomerSchema, invoice: InvoiceSchema, subscription: SubscriptionSchema } as const

/** The entity must exist in scope (not deleted): 400 naming entity_id otherwise. */
export async function requireEntity(em: EntityManager, scope: Scope, type: MappedEntityType, id: string): Promise<void> {
  // one schema per entity type; each has the common columns
  const schema = SCHEMAS[type] as unknown as EntitySchema<BaseRecord>
  const found = await em.count(schema, { id, ...scope, status: { $ne: 'deleted' } })
  if (!found) throw new ValidationError(`entity_id: ${type} ${id} not found`, 'entity_id')
}

export async function findMapping(em: EntityManager, scope: Scope, type: MappedEntityType, entityId: string, provider: string) {
  return em.findOne(EntityIntegrationMappingSchema, { ...scope, entity_type: type, entity_id: entityId, provider_type: provider, status: { $ne: 'deleted' } })
}

export async function findByProviderId(em: EntityManager, scope: Scope, type: MappedEntityType, provider: string, providerEntityId: string) {
  return em.findOne(EntityIntegrationMappingSchema, { ...scope, entity_type: type, provider_type: provider, provider_entity_id: providerEntityId, status: { $ne: 'deleted' } })
}

/** Creates or re-points the entity's link to `provider`; returns the stored mapping. */
export async function upsertMapping(em: EntityManager, scope: Scope, input: LinkInput, userId: string | null): Promise<EntityIntegrationMapping> {
  const taken = await findByProviderId(em, scope, input.entity_type, input.provider, input.provider_entity_id)
  if (taken && taken.entity_id !== input.entity_id) {
    throw new AlreadyExistsError(`${input.provider} ${input.entity_type} ${input.provider_entity_id} is already linked to ${taken.entity_id}`)
  }
  const conn = em.getConnection()
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- MikroORM types the transaction context as any
  const ctx = em.getTransactionContext()
  const [row] = (await conn.execute(
    `INSERT INTO entity_integration_mappings (id, tenant_id, environment_id, entity_type, entity_id, provider_type, provider_entity_id, created_by, updated_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (tenant_id, environment_id, entity_type, entity_id, provider_type) WHERE status <> 'deleted'
     DO UPDATE SET provider_entity_id = EXCLUDED.provider_entity_id, updated_at = now(), updated_by = EXCLUDED.updated_by
     RETURNING id`,
    [newId('intmap'), scope.tenant_id, scope.environment_id, input.entity_type, input.entity_id, input.provider, input.provider_entity_id, userId, userId],
    'all', ctx,
  )) as { id: string }[]
  if (input.entity_type === 'customer') {
    await conn.execute(
      `INSERT INTO customer_integrations (id, tenant_id, environment_id, entity_id, provider_type, provider_entity_id, created_by, updated_by)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, environment_id, entity_id, provider_type) WHERE status <> 'deleted'
       DO UPDATE SET provider_entity_id = EXCLUDED.provider_entity_id, updated_at = now(), updated_by = EXCLUDED.updated_by`,
      [newId('custint'), scope.tenant_id, scope.environment_id, input.entity_id, input.provider, input.provider_entity_id, userId, userId],
      'run', ctx,
    )
  }
  return (await em.findOneOrFail(EntityIntegrationMappingSchema, { id: row.id }, { refresh: true }))
}

export async function linkEntity(em: EntityManager, scope: Scope, input: LinkInput, userId: string | null): Promise<EntityIntegrationMapping> {
  return em.transactional(async (tx) => {
    await requireEntity(tx, scope, input.entity_type, input.entity_id)
    return upsertMapping(tx, scope, input, userId)
  })
}

export const serializeMapping = (m: EntityIntegrationMapping) => ({
  ...serializeBase(m), entity_type: m.entity_type, entity_id: m.entity_id, provider_type: m.provider_type, provider_entity_id: m.provider_entity_id,
})
