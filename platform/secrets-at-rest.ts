// Secrets at rest (provider credentials, webhook signing secrets): AES-256-GCM under config.integrations.encryptionKey, with the
// record's scope and id as associated data, so a ciphertext copied into another row does not
// decrypt. Stored as `v1.<iv>.<tag>.<ciphertext>` (base64url parts).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const VERSION = 'v1'

export function encryptJson(key: Buffer, aad: string, value: unknown): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(aad))
  const ct = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()])
  return [VERSION, iv, cipher.getAuthTag(), ct].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.')
}

export function decryptJson<T>(key: Buffer, aad: string, stored: string): T {
  const [version, iv, tag, ct] = stored.split('.')
  if (version !== VERSION || !iv || !tag || ct === undefined) throw new Error('unrecognised credentials ciphertext')
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
  decipher.setAAD(Buffer.from(aad))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  const plain = Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()])
  return JSON.parse(plain.toString('utf8')) as T
}

/** The encryption keys in use: the current one, and during a rotation the one it replaces. */
export interface SecretKeys {
  encryptionKey: Buffer
  previousEncryptionKey?: Buffer
}

/**
 * Decrypts under the current key, else the previous one; `stale` says the value must be
 * re-encrypted under the current key (scripts/rotate-secrets.ts does).
 */
export function decryptJsonRotating<T>(keys: SecretKeys, aad: string, stored: string): { value: T; stale: boolean } {
  try {
    return { value: decryptJson<T>(keys.encryptionKey, aad, stored), stale: false }
  } catch (err) {
    if (!keys.previousEncryptionKey) throw err
    return { value: decryptJson<T>(keys.previousEncryptionKey, aad, stored), stale: true }
  }
}
