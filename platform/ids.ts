import { randomBytes } from 'node:crypto'

// Crockford base32, as in ULID: ids sort by creation time and are URL-safe.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

function encodeTime(ms: number): string {
  let out = ''
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out
    ms = Math.floor(ms / 32)
  }
  return out
}

export function ulid(now = Date.now()): string {
  const bytes = randomBytes(16)
  let rand = ''
  for (let i = 0; i < 16; i++) rand += ALPHABET[bytes[i] & 31]
  return encodeTime(now) + rand
}

/** Resource ids carry a type prefix, e.g. `cust_01J...`, so a wrong id in a path is obvious. */
export function newId(prefix: string): string {
  return `${prefix}_${ulid()}`
}
