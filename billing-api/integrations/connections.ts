// Connection records: one active connection per provider and environment. Credentials are
// encrypted before they reach the ORM and are never returned; responses carry an obscured hint.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Config } from '../../platform/config.js'
import { AlreadyExistsError, NotFoundError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import { validateOutboundUrl } from '../../platform/outbound-url-guard.js'
import type { Scope } from '../db/scope.js'
import { serializeBase } from '../db/common.js'
import { obscureSecret } from '../http/obscure-secret.js'
import { decryptJsonRotating, encryptJson } from '../../platform/secrets-at-rest.js'
import { IntegrationConnectionSchema, type ConnectionSettings, type IntegrationConnection } from './entities.js'
import { providerFor } from './providers.js'
import type { OpenConnection, ProviderCredentials } from './provider.js'

export interface ConnectionInput {
  provider: string
  name: string
  credentials: ProviderCredentials
  settings?: ConnectionSettings
  metadata?: Record<string, string>
}

export const connectionAad = (c: Pick<IntegrationConnection, 'tenant_id' | 'environment_id' | 'id'>) => `integration_connections/${c.tenant_id}/${c.environment_id}/${c.id}`

export async function createConnection(config: Config, em: EntityManager, scope: Scope, input: ConnectionInput, userId: string | null): Promise<IntegrationConnection> {
  providerFor(config, input.provider)
  if (input.provider === 'generic_http' && !input.settings?.base_url) throw new ValidationError('settings.base_url is required for generic_http', 'settings.base_url')
  if (input.settings?.base_url) await validateOutboundUrl(config.outbound, input.settings.base_url, 'settings.base_url')
  const existing = await em.findOne(IntegrationConnectionSchema, { ...scope, provider: input.provider, status: 'published' })
  if (existing) throw new AlreadyExistsError(`this environment already has a ${input.provider} connection (${existing.id}); delete it first`)
  const id = newId('intconn')
  const connection = em.create(IntegrationConnectionSchema, {
    id, ...scope, provider: input.provider, name: input.name,
    credentials_encrypted: encryptJson(config.integrations.encryptionKey, connectionAad({ ...scope, id }), input.credentials),
    credentials_hint: { api_key: obscureSecret(input.credentials.api_key), webhook_secret: obscureSecret(input.credentials.webhook_secret) },
    settings: input.settings ?? {}, status: 'published', metadata: input.metadata ?? {}, created_by: userId, updated_by: userId,
  })
  await em.flush()
  return connection
}

export const serializeConnection = (c: IntegrationConnection) => ({
  ...serializeBase(c), provider: c.provider, name: c.name, credentials: c.credentials_hint, settings: c.settings,
})

export async function deleteConnection(em: EntityManager, scope: Scope, id: string, userId: string | null): Promise<void> {
  const updated = await em.nativeUpdate(IntegrationConnectionSchema, { id, ...scope, status: 'published' }, { status: 'deleted', updated_by: userId })
  if (!updated) throw new NotFoundError('integration connection', id)
}

export function openConnection(config: Config, c: IntegrationConnection): OpenConnection {
  return {
    id: c.id,
    scope: { tenant_id: c.tenant_id, environment_id: c.environment_id },
    provider: c.provider,
    credentials: decryptJsonRotating<ProviderCredentials>(config.integrations, connectionAad(c), c.credentials_encrypted).value,
    settings: c.settings ?? {},
  }
}

/** The environment's active connection to `provider`, decrypted, or null. */
export async function findOpenConnection(config: Config, em: EntityManager, scope: Scope, provider: string): Promise<OpenConnection | null> {
  const c = await em.findOne(IntegrationConnectionSchema, { ...scope, provider, status: 'published' })
  return c ? openConnection(config, c) : null
}

export async function requireOpenConnection(config: Config, em: EntityManager, scope: Scope, provider: string): Promise<OpenConnection> {
  const c = await findOpenConnection(config, em, scope, provider)
  if (!c) throw new ValidationError(`provider: this environment has no active ${provider} connection`, 'provider')
  return c
}
