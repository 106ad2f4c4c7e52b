// Webhook signing secrets at rest: encrypted like integration credentials (AES-256-GCM under
// INTEGRATIONS_ENCRYPTION_KEY), bound to the endpoint row by its associated data.
import { decryptJsonRotating, encryptJson, type SecretKeys } from '../../platform/secrets-at-rest.js'
import type { WebhookEndpoint } from './webhook.entity.js'

type Row = Pick<WebhookEndpoint, 'tenant_id' | 'environment_id' | 'id'>

const aad = (e: Row) => `webhook_endpoints/${e.tenant_id}/${e.environment_id}/${e.id}`

export function sealWebhookSecret(keys: SecretKeys, e: Row, secret: string): string {
  return encryptJson(keys.encryptionKey, aad(e), secret)
}

/** The signing secret; `stale` when it is plaintext or under the previous key (to re-seal). */
export function openWebhookSecret(keys: SecretKeys, e: Row & Pick<WebhookEndpoint, 'secret' | 'secret_encrypted'>): { value: string; stale: boolean } {
  if (e.secret_encrypted) return decryptJsonRotating<string>(keys, aad(e), e.secret_encrypted)
  if (e.secret) return { value: e.secret, stale: true }
  throw new Error(`webhook endpoint ${e.id} has no signing secret`)
}
