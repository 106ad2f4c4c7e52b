// A STAND-IN FOR STRIPE'S API, for tests only: a local HTTP server that the real `stripe` SDK
// talks to (STRIPE_API_BASE / config.integrations.stripeApiBase points at it). It implements
// the few endpoints the integrations domain calls, records every request (method, path,
// decoded form body, idempotency key) and answers Stripe-shaped JSON. Like Stripe, it replays
// the first answer for a repeated Idempotency-Key. It checks nothing else Stripe would
// (API keys, parameter validation); tests assert on the recorded requests instead.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RecordedRequest {
  method: string
  path: string
  body: Record<string, any>
  idempotencyKey: string | undefined
  authorization: string | undefined
  /** Date.now() on arrival */
  at: number
}

type Obj = Record<string, any>

/** `metadata[a]=1&lines[0][x]=2` -> { metadata: { a: '1' }, lines: { '0': { x: '2' } } } (values stay strings). */
export function decodeForm(text: string): Obj {
  const out: Obj = {}
  for (const [key, value] of new URLSearchParams(text)) {
    const parts = key.replace(/\]/g, '').split('[')
    let node = out
    for (const p of parts.slice(0, -1)) node = node[p] ??= {}
    node[parts[parts.length - 1]] = value
  }
  return out
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export class StripeStandIn {
  readonly requests: RecordedRequest[] = []
  readonly customers = new Map<string, Obj>()
  readonly invoices = new Map<string, Obj>()
  readonly invoiceItems = new Map<string, Obj>()
  private readonly replays = new Map<string, { status: number; body: Obj }>()
  private seq = 0
  readonly checkoutSessions = new Map<string, Obj>()
  /** the next N requests answer 500 (a provider outage) */
  failNext = 0
  /** the next N invoice payments (POST /v1/invoices/{id}/pay) are declined like a card with insufficient funds */
  declineNextPay = 0
  private server?: Server
  url = ''

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.handle(req).then(({ status, body }) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${++this.seq}` })
        res.end(JSON.stringify(body))
      })
    })
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
  }

  /** Requests to `path` (exact, or a RegExp), in order. */
  calls(method: string, path: string | RegExp): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)))
  }

  /** What happens at Stripe when the customer pays: the invoice becomes `paid`. */
  setInvoiceStatus(id: string, status: string): void {
    const inv = this.invoices.get(id)
    if (!inv) throw new Error(`stand-in has no invoice ${id}`)
    inv.status = status
  }

  private id(prefix: string): string {
    return `${prefix}_standin${++this.seq}`
  }

  private async handle(req: IncomingMessage): Promise<{ status: number; body: Obj }> {
    const url = new URL(req.url ?? '/', 'http://stand-in')
    const text = await readBody(req)
    const body = req.method === 'GET' ? decodeForm(url.search.slice(1)) : decodeForm(text)
    const idempotencyKey = req.headers['idempotency-key'] as string | undefined
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, body, idempotencyKey, authorization: req.headers.authorization, at: Date.now() }
    this.requests.push(recorded)
    if (this.failNext > 0) {
      this.failNext--
      return { status: 500, body: { error: { type: 'api_error', message: 'stand-in outage' } } }
    }
    const replayKey = idempotencyKey && `${recorded.method} ${recorded.path} ${idempotencyKey}`
    if (replayKey && this.replays.has(replayKey)) return this.replays.get(replayKey)!
    const answer = this.route(recorded)
    if (replayKey) this.replays.set(replayKey, answer)
    return answer
  }

  private route(r: RecordedRequest): { status: number; body: Obj } {
    const ok = (body: Obj) => ({ status: 200, body })
    const missing = (what: string) => ({ status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}` } } })
    let m: RegExpExecArray | null
    if (r.method === 'POST' && r.path === '/v1/customers') {
      const c = { id: this.id('cus'), object: 'customer', ...r.body, metadata: r.body.metadata ?? {} }
      this.customers.set(c.id, c)
      return ok(c)
    }
    if ((m = /^\/v1\/customers\/([^/]+)$/.exec(r.path))) {
      const c = this.customers.get(m[1])
      if (!c) return missing(`customer: '${m[1]}'`)
      if (r.method === 'POST') Object.assign(c, r.body)
      return ok(c)
    }
    if (r.method === 'POST' && r.path === '/v1/invoices') {
      const inv = { id: this.id('in'), object: 'invoice', status: 'draft', amount_due: 0, amount_paid: 0, ...r.body, metadata: r.body.metadata ?? {} }
      this.invoices.set(inv.id, inv)
      return ok(inv)
    }
    if (r.method === 'POST' && r.path === '/v1/invoiceitems') {
      const inv = this.invoices.get(r.body.invoice)
      if (!inv) return missing(`invoice: '${r.body.invoice}'`)
      const item = { id: this.id('ii'), object: 'invoiceitem', ...r.body, amount: Number(r.body.amount) }
      this.invoiceItems.set(item.id, item)
      inv.amount_due += item.amount
      return ok(item)
    }
    if (r.method === 'POST' && (m = /^\/v1\/invoices\/([^/]+)\/finalize$/.exec(r.path))) {
      const inv = this.invoices.get(m[1])
      if (!inv) return missing(`invoice: '${m[1]}'`)
      inv.status = 'open'
      return ok(inv)
    }
    if (r.method === 'POST' && (m = /^\/v1\/invoices\/([^/]+)\/pay$/.exec(r.path))) {
      const inv = this.invoices.get(m[1])
      if (!inv) return missing(`invoice: '${m[1]}'`)
      if (this.declineNextPay > 0) {
        this.declineNextPay--
        return { status: 402, body: { error: { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' } } }
      }
      inv.status = 'paid'
      inv.amount_paid = inv.amount_due
      return ok(inv)
    }
    if (r.method === 'POST' && r.path === '/v1/checkout/sessions') {
      const id = this.id('cs')
      const session = { id, object: 'checkout.session', status: 'open', url: `${this.url}/checkout/${id}`, ...r.body, metadata: r.body.metadata ?? {} }
      this.checkoutSessions.set(id, session)
      return ok(session)
    }
    if (r.method === 'GET' && (m = /^\/v1\/invoices\/([^/]+)$/.exec(r.path))) {
      const inv = this.invoices.get(m[1])
      return inv ? ok(inv) : missing(`invoice: '${m[1]}'`)
    }
    return { status: 404, body: { error: { type: 'invalid_request_error', message: `stand-in does not implement ${r.method} ${r.path}` } } }
  }
}
