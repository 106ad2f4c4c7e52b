// Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
// `${id}.${timestamp}.${body}` with the base64 key after the `whsec_` prefix, sent as
// `webhook-signature: v1,<base64>` with `webhook-id` and `webhook-timestamp` (seconds).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`
}

function key(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64')
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', key(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`
}

export function signatureHeaders(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': sign(secret, id, timestampSeconds, body) }
}

/** What a receiver does: any of the space-separated v1 signatures must match, within the tolerance. */
export function verify(secret: string, headers: Record<string, string | undefined>, body: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const id = headers['webhook-id']
  const ts = Number(headers['webhook-timestamp'])
  const given = headers['webhook-signature']
  if (!id || !Number.isInteger(ts) || !given || Math.abs(nowSeconds - ts) > toleranceSeconds) return false
  const expected = Buffer.from(sign(secret, id, ts, body))
  return given.split(' ').some((s) => {
    const b = Buffer.from(s)
    return b.length === expected.length && timingSafeEqual(b, expected)
  })
}
