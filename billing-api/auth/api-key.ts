import { createHash, randomBytes } from 'node:crypto'

/** Keys look like `ml_live_<43 base64url chars>`; only the SHA-256 hash is stored. */
export function generateApiKey(): { plaintext: string; hash: string; displayId: string } {
  const plaintext = `ml_${randomBytes(32).toString('base64url')}`
  return { plaintext, hash: hashApiKey(plaintext), displayId: `${plaintext.slice(0, 7)}...${plaintext.slice(-4)}` }
}

export function hashApiKey(plaintext: string): string {
  return createHash('sha256').update(plaintext, 'utf8').digest('hex')
}
