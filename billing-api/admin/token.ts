// The operators' credential: one bearer token (ADMIN_TOKEN), separate from tenant API keys.
import { createHash, timingSafeEqual } from 'node:crypto'

/** The token of an `Authorization: Bearer <token>` header; undefined for anything else. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header
  const m = value ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(value) : null
  return m?.[1]
}

/**
 * Constant time in the content of both: the digests have the same length whatever the inputs,
 * so neither a wrong prefix nor a wrong length answers sooner.
 */
export function sameToken(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest()
  const b = createHash('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}
