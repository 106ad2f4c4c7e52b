// Provider credentials at rest: AES-256-GCM under config.integrations.encryptionKey, with the
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
