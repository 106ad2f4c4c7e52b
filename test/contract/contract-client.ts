// Sends one request for an operation of the OpenAPI document and checks the answer against what
// the document declares for its status: the status is declared, the body the route produced
// (before serialization) validates against the declared schema, and the body on the wire is that
// same body (the serializer dropped or coerced nothing).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { DocumentValidator } from './document-validator.js'
import { PROBE_HEADER, type RawBodies } from './raw-bodies.js'

export interface CallOptions {
  params?: Record<string, string>
  query?: string
  body?: unknown
  /** raw request body (sent as is, with `headers`' content type) */
  rawBody?: string
  headers?: Record<string, string>
  /** the status the scenario expects; default: any 2xx */
  expect?: number
}

export interface Answer {
  status: number
  body: any
  contentType: string
}

export class ContractClient {
  /** operation -> statuses it answered */
  readonly answered = new Map<string, Set<number>>()

  constructor(
    private readonly baseUrl: string,
    private readonly validator: DocumentValidator,
    private readonly raw: RawBodies,
  ) {}

  as(headers: Record<string, string>) {
    return (op: string, opts: CallOptions = {}) => this.call(op, { ...opts, headers: { ...headers, ...opts.headers } })
  }

  async call(op: string, opts: CallOptions = {}): Promise<Answer> {
    const [method, template] = op.split(' ') as [string, string]
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = opts.params?.[name]
      assert.ok(value !== undefined, `${op}: no value for {${name}}`)
      return encodeURIComponent(value)
    })
    const probe = randomUUID()
    const headers: Record<string, string> = { [PROBE_HEADER]: probe, ...opts.headers }
    let payload = opts.rawBody
    if (payload === undefined && opts.body !== undefined) {
      headers['content-type'] ??= 'application/json'
      payload = JSON.stringify(opts.body)
    }
    const res = await fetch(`${this.baseUrl}${path}${opts.query ? `?${opts.query}` : ''}`, { method, headers, body: payload })
    const text = await res.text()
    const contentType = res.headers.get('content-type') ?? ''
    const isJson = contentType.startsWith('application/json')
    const body = isJson && text ? JSON.parse(text) : text
    const where = `${op} answered ${res.status} ${isJson ? JSON.stringify(body).slice(0, 400) : contentType}`
    if (opts.expect !== undefined) assert.equal(res.status, opts.expect, where)
    else assert.ok(res.status >= 200 && res.status < 300, where)

    const statuses = this.answered.get(op) ?? new Set<number>()
    statuses.add(res.status)
    this.answered.set(op, statuses)

    const produced = this.raw.take(probe)
    const declared = this.validator.response(method, template, res.status)
    assert.ok(declared, `${where}: status ${res.status} is not declared in the document`)
    const content = declared.content ?? {}
    if (Object.keys(content).length === 0) {
      assert.equal(text, '', `${where}: the document declares no body for ${res.status}`)
      return { status: res.status, body, contentType }
    }
    if (!content['application/json']) {
      assert.ok(Object.keys(content).some((type) => contentType.startsWith(type)), `${where}: declared ${Object.keys(content).join(', ')}`)
      return { status: res.status, body, contentType }
    }
    assert.ok(isJson, `${where}: declared JSON`)
    assert.ok(produced.found, `${where}: the route produced no JSON object`)
    const errors = this.validator.validate(method, template, res.status, produced.body)
    assert.deepEqual(errors, [], `${where}: the route's body does not match the declared schema`)
    assert.deepEqual(this.validator.moneyErrors(method, template, res.status, body), [], `${where}: money not in its currency's minor units`)
    assert.deepEqual(body, produced.body, `${where}: serialization changed the body`)
    return { status: res.status, body, contentType }
  }
}
