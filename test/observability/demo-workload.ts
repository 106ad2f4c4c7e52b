// A small workload that moves every business metric once, through the typed client and the
// scheduler, with figures worked out by hand: 250 events (tokens 1..10 cycling: 1375 tokens)
// billed at 0.002 plus a 10.00 fee = 12.75 USD, finalized and paid; a customer without usage
// (a skipped invoice); a manual invoice of 5.00 finalized, then voided; one request refused.
import { createMeterlineClient, IngestError, ingestEvents, type MeterlineClient, type paths } from '../../client/src/index.js'
import { eventually, type TestPlatform } from '../support/platform.js'

export interface DemoOutcome {
  tenantId: string
  meterId: string
  invoiceId: string
}

type Body = { [key: string]: unknown }
type PriceInput = NonNullable<paths['/v1/plans']['post']['requestBody']['content']['application/json']['prices']>[number]

function id(res: { data?: Body; error?: { code: string; message: string }; response: Response }, what: string): string {
  const v = res.data?.id
  if (typeof v !== 'string') throw new Error(`${what}: HTTP ${res.response.status} ${res.error?.code ?? ''} ${res.error?.message ?? ''}`)
  return v
}

function expectOk(res: { error?: { code: string; message: string }; response: Response }, what: string): void {
  if (!res.response.ok) throw new Error(`${what}: HTTP ${res.response.status} ${res.error?.code ?? ''} ${res.error?.message ?? ''}`)
}

async function subscribe(client: MeterlineClient, customer: string, prices: PriceInput[], start: string): Promise<void> {
  const customerId = id(await client.POST('/v1/customers', { body: { external_id: customer, name: customer } }), 'customer')
  const planId = id(await client.POST('/v1/plans', { body: { name: `Plan of ${customer}`, prices } }), 'plan')
  id(await client.POST('/v1/subscriptions', { body: { customer_id: customerId, plan_id: planId, currency: 'usd', start_date: start } }), 'subscription')
}

export async function runDemoWorkload(p: TestPlatform): Promise<DemoOutcome> {
  const { tenantId, apiKey } = await p.newTenant('Observability demo')
  const client = createMeterlineClient({ baseUrl: p.url, apiKey })
  const now = p.ctx.clock.now()
  const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1))

  const meterId = id(await client.POST('/v1/meters', { body: { name: 'Tokens', event_name: 'llm_call', aggregation: { type: 'SUM', field: 'tokens' } } }), 'meter')
  const usagePrice: PriceInput = { type: 'USAGE', billing_model: 'FLAT_FEE', currency: 'USD', amount: '0.002', meter_id: meterId, billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: 'Tokens' }
  const fee: PriceInput = { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '10', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: 'Platform fee' }
  await subscribe(client, 'acme', [usagePrice, fee], lastMonth.toISOString())
  await subscribe(client, 'idle', [usagePrice], lastMonth.toISOString())

  const events = Array.from({ length: 250 }, (_, i) => ({
    event_name: 'llm_call',
    external_customer_id: 'acme',
    timestamp: new Date(lastMonth.getTime() + 86_400_000 + i * 1000).toISOString(),
    properties: { tokens: (i % 10) + 1 },
  }))
  await ingestEvents(client, events)
  await ingestEvents(client, [{ event_name: 'llm_call', external_customer_id: 'acme', timestamp: '1990-01-01T00:00:00Z' }]).then(
    () => { throw new Error('a 1990 event must be refused') },
    (err: unknown) => { if (!(err instanceof IngestError)) throw err },
  )
  await eventually(async () => {
    const u = await client.POST('/v1/meters/{id}/usage', {
      params: { path: { id: meterId } },
      body: { external_customer_id: 'acme', start_time: '2000-01-01T00:00:00Z', end_time: '2100-01-01T00:00:00Z' },
    })
    return u.data?.event_count === 250 ? true : undefined
  }, 'the 250 demo events counted')

  // The ended period of both subscriptions: acme's invoice (12.75) and idle's (0.00, skipped).
  await p.scheduler!.trigger('subscription-billing', { tenant_id: tenantId })
  const list = await client.GET('/v1/invoices', { params: { query: { limit: 100 } } })
  expectOk(list, 'invoice list')
  const items = Array.isArray(list.data?.items) ? (list.data.items as Body[]) : []
  const drafted = items.find((i) => i.invoice_status === 'DRAFT' && i.billing_reason === 'SUBSCRIPTION_CYCLE')
  if (typeof drafted?.id !== 'string') throw new Error(`no drafted cycle invoice in ${JSON.stringify(list.data)}`)
  const invoiceId = drafted.id
  expectOk(await client.POST('/v1/invoices/{id}/finalize', { params: { path: { id: invoiceId } }, body: {} }), 'finalize')
  expectOk(await client.POST('/v1/invoices/{id}/payments', { params: { path: { id: invoiceId } }, body: { amount: '12.75', reference: 'wire-1' } }), 'payment')

  const customers = await client.GET('/v1/customers', {})
  const acme = (Array.isArray(customers.data?.items) ? (customers.data.items as Body[]) : []).find((c) => c.external_id === 'acme')
  const manualId = id(
    await client.POST('/v1/invoices', { body: { customer_id: String(acme?.id), invoice_type: 'ONE_OFF', currency: 'USD', line_items: [{ display_name: 'Setup', amount: '5' }] } }),
    'manual invoice',
  )
  expectOk(await client.POST('/v1/invoices/{id}/finalize', { params: { path: { id: manualId } }, body: {} }), 'finalize manual')
  expectOk(await client.POST('/v1/invoices/{id}/void', { params: { path: { id: manualId } }, body: {} }), 'void')
  return { tenantId, meterId, invoiceId }
}
