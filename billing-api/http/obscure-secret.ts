/**
 * What responses show instead of a secret (provider credentials, webhook signing secrets): its
 * type prefix (`sk_live_`, `whsec_`) and, for long secrets, the last four characters.
 */
export function obscureSecret(secret: string): string {
  const prefix = /^[a-z]+_(test_|live_)?/.exec(secret)?.[0] ?? ''
  return secret.length >= 16 ? `${prefix}****${secret.slice(-4)}` : `${prefix}****`
}
