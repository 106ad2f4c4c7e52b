// Example: a meter, a customer on a pay-as-you-go plan, usage events sent with retries, then
// the invoice of the current period (a preview: the billing schedule drafts the real one when
// the period ends). Run it against `npm run up`:
//
//   METERLINE_URL=http://127.0.0.1:8080 METERLINE_API_KEY=... npx tsx client/examples/ingest-and-invoice.ts
import { fileURLToPath } from 'node:url'
import { createMeterlineClient, ingestEvents, type ErrorResponse, type IngestOptions, type MeterlineClient } from '../src/index.js'

export interface IngestAndInvoiceOptions {
  /** external id of the customer the example creates */
  customer: string
  events: number
  ingest?: IngestOptions
  /** how long to wait for the aggregator to count every event */
  countTimeoutMs?: number
}

export interface IngestAndInvoiceResult {
  eventIds: string[]
  tokens: string
  invoice: { total: string; currency: string; lines: { display_name: string; quantity: string; amount: string }[] }
}

/** The body of a success, or an Error carrying the ErrorResponse. */
function ok<T>(res: { data?: T; error?: ErrorResponse; response: Response }, what: string): T {
  if (res.data === undefined) throw new Error(`${what}: HTTP ${res.response.status} ${res.error?.code ?? ''} ${res.error?.message ?? ''}`)
  return res.data
}

export async function ingestAndInvoice(client: MeterlineClient, opts: IngestAndInvoiceOptions): Promise<IngestAndInvoiceResult> {
  const now = new Date()
  const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString()

  const meter = ok(await client.POST('/v1/meters', { body: { name: 'Tokens', event_name: 'llm_call', aggregation: { type: 'SUM', field: 'tokens' } } }), 'create meter')
  const meterId = meter.id
  const customer = ok(await client.POST('/v1/customers', { body: { external_id: opts.customer, name: opts.customer } }), 'create customer')
  const plan = ok(
    await client.POST('/v1/plans', {
      body: {
        name: 'Pay as you go',
        prices: [
          { type: 'USAGE', billing_model: 'FLAT_FEE', currency: 'USD', amount: '0.002', meter_id: meterId, billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: 'Tokens' },
          { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '10', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: 'Platform fee' },
        ],
      },
    }),
    'create plan',
  )
  const subscription = ok(
    await client.POST('/v1/subscriptions', { body: { customer_id: customer.id, plan_id: plan.id, currency: 'usd', start_date: periodStart } }),
    'create subscription',
  )

  // tokens cycle 1..10; event ids are left to the wrapper, which fixes them before the first attempt.
  const events = Array.from({ length: opts.events }, (_, i) => ({
    event_name: 'llm_call',
    external_customer_id: opts.customer,
    timestamp: now.toISOString(),
    properties: { tokens: (i % 10) + 1 },
  }))
  const sent = await ingestEvents(client, events, opts.ingest)

  // Ingest answers once the events are durable; the aggregator counts them a moment later.
  const deadline = Date.now() + (opts.countTimeoutMs ?? 30_000)
  const window = { external_customer_id: opts.customer, start_time: periodStart, end_time: new Date(now.getTime() + 3_600_000).toISOString() }
  let usage
  for (;;) {
    usage = ok(await client.POST('/v1/meters/{id}/usage', { params: { path: { id: meterId } }, body: window }), 'usage')
    if (usage.event_count === opts.events) break
    if (Date.now() > deadline) throw new Error(`only ${String(usage.event_count)} of ${opts.events} events counted`)
    await new Promise((r) => setTimeout(r, 200))
  }

  const preview = ok(await client.POST('/v1/invoices/internal/preview', { body: { subscription_id: subscription.id } }), 'invoice preview')
  return {
    eventIds: sent.eventIds,
    tokens: usage.value,
    invoice: {
      total: preview.total,
      currency: preview.currency,
      lines: preview.line_items.map((l) => ({ display_name: l.display_name ?? '', quantity: l.quantity, amount: l.amount })),
    },
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const baseUrl = process.env.METERLINE_URL ?? 'http://127.0.0.1:8080'
  const apiKey = process.env.METERLINE_API_KEY
  if (!apiKey) throw new Error('set METERLINE_API_KEY (npm run up prints one)')
  const client = createMeterlineClient({ baseUrl, apiKey })
  const result = await ingestAndInvoice(client, {
    customer: `example-${Date.now()}`,
    events: 250,
    ingest: { onRetry: (r) => console.log(`retry ${r.attempt} in ${r.delayMs} ms: ${r.reason}`) },
  })
  console.log(`counted ${result.tokens} tokens from ${result.eventIds.length} events`)
  for (const l of result.invoice.lines) console.log(`  ${l.display_name.padEnd(14)} ${l.quantity.padStart(10)}  ${l.amount}`)
  console.log(`  total ${result.invoice.total} ${result.invoice.currency}`)
}
