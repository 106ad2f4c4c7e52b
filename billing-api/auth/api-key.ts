// API keys look like `ml_<43 base64url chars>` and are shown once. Stored: a keyed hash,
// HMAC-SHA256 under API_KEY_HASH_SECRET over the key's SHA-256 digest, and the scheme that
// made it (`hmac-sha256:<secret fingerprint>`). Hashing the digest rather than the key lets
// rows from before the keyed hash (`sha256`: the bare digest) be upgraded without the keys
// (scripts/rotate-secrets.ts); a rotated secret needs the key itself, so those rows are
// upgraded on their next use (candidateHashes + authenticate.ts).
import { createHash, createHmac, randomBytes } from 'node:crypto'

export interface ApiKeyHashing {
  secret: Buffer
  /** the secret being rotated out: still accepted, and upgraded on use */
  previous?: Buffer
}

export const LEGACY_SCHEME = 'sha256'

export interface StoredHash {
  hash: string
  scheme: string
}

export function legacyDigest(plaintext: string): string {
  return createHash('sha256').update(plaintext, 'utf8').digest('hex')
}

/** Names the secret without revealing it, so rows show which secret hashed them. */
export function schemeOf(secret: Buffer): string {
  return `hmac-sha256:${createHash('sha256').update('meterline-api-key-secret-id').update(secret).digest('hex').slice(0, 12)}`
}

/** The keyed hash from a key's legacy digest: what the upgrade of a `sha256` row stores. */
export function keyedFromDigest(secret: Buffer, digest: string): StoredHash {
  return { hash: createHmac('sha256', secret).update(digest, 'utf8').digest('hex'), scheme: schemeOf(secret) }
}

export function hashApiKey(h: ApiKeyHashing, plaintext: string): StoredHash {
  return keyedFromDigest(h.secret, legacyDigest(plaintext))
}

/** Every stored form a presented key may still have, current first. */
export function candidateHashes(h: ApiKeyHashing, plaintext: string): StoredHash[] {
  const digest = legacyDigest(plaintext)
  const out = [keyedFromDigest(h.secret, digest)]
  if (h.previous) out.push(keyedFromDigest(h.previous, digest))
  out.push({ hash: digest, scheme: LEGACY_SCHEME })
  return out
}

export function generateApiKey(h: ApiKeyHashing): { plaintext: string; hash: string; scheme: string; displayId: string } {
  const plaintext = `ml_${randomBytes(32).toString('base64url')}`
  return { plaintext, ...hashApiKey(h, plaintext), displayId: `${plaintext.slice(0, 7)}...${plaintext.slice(-4)}` }
}
