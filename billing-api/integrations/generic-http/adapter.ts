// A minimal provider for in-house systems: pushes JSON to the connection's settings.base_url
// (POST /customers, PUT /customers/{id}, POST /invoices, with `Authorization: Bearer <api_key>`;
// the answer's `id` is the provider id) and accepts webhooks signed with
// `x-signature: sha256=<hex HMAC-SHA256 of the raw body under webhook_secret>`.
// It has no pull: a pull sync answers the unsupported error. Calls go through the SSRF guard.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { ValidationError } from '../../../platform/errors.js'
import { OutboundUrlRefused, outboundRequest, type OutboundPolicy } from '../../../platform/outbound-url-guard.js'
import { WebhookSignatureError, type IntegrationProvider, type OpenConnection } from '../provider.js'

async function send(outbound: OutboundPolicy, conn: OpenConnection, method: string, path: string, body: unknown): Promise<string> {
  const base = conn.settings.base_url
  if (!base) throw new Error('generic_http connection has no settings.base_url')
  // Under the SSRF guard; a redirect is not followed (it is not ok). A refused base_url is the
  // connection's fault, not the provider's: a validation error (no retry), not a 503.
  const res = await outboundRequest(outbound, new URL(path, base.endsWith('/') ? base : `${base}/`), {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${conn.credentials.api_key}` },
    body: JSON.stringify(body),
    timeoutMs: 20_000,
  }).catch((err: unknown) => {
    if (err instanceof OutboundUrlRefused) throw new ValidationError(`settings.base_url: ${err.message}`, 'settings.base_url')
    throw err
  })
  if (res.status < 200 || res.status >= 300) throw new Error(`generic_http ${method} ${path} answered ${res.status}`)
  if (res.truncated) throw new Error(`generic_http ${method} ${path} answered with a body over 1 MiB`)
  const json = JSON.parse(res.body.toString('utf8')) as { id?: unknown }
  if (typeof json.id !== 'string' || json.id === '') throw new Error(`generic_http ${method} ${path} answered without an id`)
  return json.id
}

export const genericHttpProvider = (outbound: OutboundPolicy): IntegrationProvider => ({
  type: 'generic_http',
  syncCustomer: (conn, customer, existingId) =>
    existingId ? send(outbound, conn, 'PUT', `customers/${encodeURIComponent(existingId)}`, customer) : send(outbound, conn, 'POST', 'customers', customer),
  pushInvoice: (conn, invoice, providerCustomerId) => send(outbound, conn, 'POST', 'invoices', { ...invoice, provider_customer_id: providerCustomerId }),
  parseWebhook(conn, rawBody, headers) {
    const given = headers['x-signature']
    if (typeof given !== 'string' || !given.startsWith('sha256=')) throw new WebhookSignatureError('missing x-signature header')
    const expected = Buffer.from(`sha256=${createHmac('sha256', conn.credentials.webhook_secret).update(rawBody).digest('hex')}`)
    const actual = Buffer.from(given)
    if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) throw new WebhookSignatureError('x-signature does not verify')
    let parsed: { id?: unknown; type?: unknown; data?: { object?: unknown } }
    try {
      parsed = JSON.parse(rawBody.toString('utf8')) as typeof parsed
    } catch {
      throw new WebhookSignatureError('body is not JSON')
    }
    if (typeof parsed.id !== 'string' || typeof parsed.type !== 'string') throw new WebhookSignatureError('event has no id or type')
    return { id: parsed.id, type: parsed.type, object: (parsed.data?.object ?? {}) as Record<string, unknown> }
  },
})
