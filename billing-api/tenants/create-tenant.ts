// Bootstraps a tenant: its environments, a super_admin service account and a first API key.
// Used by the operator CLI (scripts/create-tenant.ts), the demo set-up and tests.
import type { EntityManager } from '@mikro-orm/postgresql'
import { newId } from '../../platform/ids.js'
import { generateApiKey, type ApiKeyHashing } from '../auth/index.js'
import { ApiKeySchema } from '../auth/api-key.entity.js'
import { UserSchema } from '../auth/user.entity.js'
import { EnvironmentSchema, TenantSchema, type TenantBillingDetails } from './tenant.entity.js'

export interface CreateTenantInput {
  name: string
  billing_details?: TenantBillingDetails
  /** the environment the first API key is bound to */
  keyEnvironment?: 'production' | 'development'
  /** the first user (default: a service account named admin); a signup's person */
  admin?: { name: string | null; email: string | null; type: 'service_account' | 'user'; metadata: Record<string, string> }
}

export interface CreatedTenant {
  tenantId: string
  environments: Record<'production' | 'development', string>
  userId: string
  apiKey: string
}

export async function createTenant(em: EntityManager, input: CreateTenantInput, keyHashing: ApiKeyHashing): Promise<CreatedTenant> {
  return em.transactional(async (tx) => {
    const tenantId = newId('tenant')
    tx.create(TenantSchema, {
      id: tenantId,
      name: input.name,
      status: 'published',
      billing_details: input.billing_details ?? {},
      metadata: {},
    })
    const envs = {} as Record<'production' | 'development', string>
    for (const type of ['production', 'development'] as const) {
      const id = newId('env')
      envs[type] = id
      tx.create(EnvironmentSchema, {
        id, tenant_id: tenantId, name: type === 'production' ? 'Production' : 'Sandbox', type,
        status: 'published', metadata: {},
      })
    }
    const userId = newId('user')
    tx.create(UserSchema, {
      id: userId, tenant_id: tenantId, name: input.admin ? input.admin.name : 'admin', email: input.admin?.email ?? null,
      type: input.admin?.type ?? 'service_account', roles: ['super_admin'], status: 'published', metadata: input.admin?.metadata ?? {},
    })
    const key = generateApiKey(keyHashing)
    tx.create(ApiKeySchema, {
      id: newId('key'), tenant_id: tenantId, environment_id: envs[input.keyEnvironment ?? 'production'], user_id: userId,
      name: 'bootstrap', key_hash: key.hash, key_hash_scheme: key.scheme, display_id: key.displayId, scope: 'full', status: 'published', expires_at: null,
      last_used_at: null, metadata: {}, created_by: userId, updated_by: userId,
    })
    return { tenantId, environments: envs, userId, apiKey: key.plaintext }
  })
}
