// The one place a Stripe SDK client is built. The API base is configurable
// (STRIPE_API_BASE) so tests point the real SDK at test/support/stripe-stand-in.ts.
import Stripe from 'stripe'

export function stripeClient(apiKey: string, apiBase: string): Stripe {
  const base = new URL(apiBase)
  const protocol = base.protocol === 'http:' ? 'http' : 'https'
  return new Stripe(apiKey, {
    host: base.hostname,
    port: base.port || (protocol === 'http' ? 80 : 443),
    protocol,
    // BullMQ retries a failed sync with backoff; the SDK's own retries would multiply them.
    maxNetworkRetries: 0,
    timeout: 20_000,
    telemetry: false,
  })
}
