// SSRF guard for every outbound call to a URL a tenant supplied (webhook endpoints, integration
// base URLs). Two enforcement points: `checkOutboundUrl` when the URL is configured (resolves
// every A/AAAA record), and `outboundRequest` when it is called, whose socket connects only
// to an address the guard accepted in that same lookup (DNS may have changed since), and which
// never follows redirects. Rules: outbound-address.ts.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { ValidationError } from './errors.js'
import { outboundUrlRefused } from './metrics.js'
import { hostAllowed, isMetadataHost, normalizeHost, parseIp, refusalFor, type AllowEntry } from './outbound-address.js'

export interface OutboundPolicy {
  /** OUTBOUND_URL_ALLOW: destinations exempt from the address rules */
  allow: AllowEntry[]
}

export class OutboundUrlRefused extends Error {
  constructor(reason: string) {
    super(`outbound URL refused: ${reason}`)
    this.name = 'OutboundUrlRefused'
  }
}

/** A call-time refusal: counted, since it means a stored URL now points somewhere forbidden. */
function refusedAtCallTime(err: unknown): never {
  if (err instanceof OutboundUrlRefused) outboundUrlRefused.inc()
  throw err
}

interface Target {
  url: URL
  host: string
  port: number
}

/** Scheme, metadata host names and literal addresses: everything that needs no DNS. */
function staticCheck(policy: OutboundPolicy, raw: string | URL): Target {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new OutboundUrlRefused('not a valid URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundUrlRefused(`scheme ${url.protocol} is not http or https`)
  if (url.username || url.password) throw new OutboundUrlRefused('credentials in the URL are not allowed')
  const host = normalizeHost(url.hostname)
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80
  if (isMetadataHost(host) && !hostAllowed(policy.allow, host, port)) throw new OutboundUrlRefused(`${host} is a cloud metadata host`)
  if (parseIp(host)) {
    const refusal = refusalFor(policy.allow, host, port, host)
    if (refusal) throw new OutboundUrlRefused(refusal)
  }
  return { url, host, port }
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)))
  })
}

function judge(policy: OutboundPolicy, t: Pick<Target, 'host' | 'port'>, addresses: LookupAddress[]): void {
  if (addresses.length === 0) throw new OutboundUrlRefused(`${t.host} has no address`)
  for (const a of addresses) {
    const refusal = refusalFor(policy.allow, t.host, t.port, a.address)
    if (refusal) throw new OutboundUrlRefused(refusal)
  }
}

/**
 * Configuration time: refuses the URL unless every address its host resolves to may be
 * called. A name that does not resolve is refused too (nothing could be delivered).
 */
export async function checkOutboundUrl(policy: OutboundPolicy, raw: string): Promise<void> {
  const t = staticCheck(policy, raw)
  if (parseIp(t.host)) return
  let addresses: LookupAddress[]
  try {
    addresses = await resolveAll(t.host)
  } catch (err) {
    throw new OutboundUrlRefused(`${t.host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'lookup failed'})`)
  }
  judge(policy, t, addresses)
}

/** For routes that store a URL: a refusal is a 400 validation_error naming the field. */
export async function validateOutboundUrl(policy: OutboundPolicy, raw: string, field: string): Promise<void> {
  try {
    await checkOutboundUrl(policy, raw)
  } catch (err) {
    if (err instanceof OutboundUrlRefused) throw new ValidationError(`${field}: ${err.message}`, field)
    throw err
  }
}

/** The socket's DNS lookup: resolves, judges every address, and hands only judged ones to connect. */
function guardedLookup(policy: OutboundPolicy, t: Target): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname)
      .then((addresses) => {
        judge(policy, t, addresses)
        const family = options.family === 4 || options.family === 6 ? options.family : 0
        const usable = family ? addresses.filter((a) => a.family === family) : addresses
        if (usable.length === 0) throw new OutboundUrlRefused(`${t.host} has no IPv${family} address`)
        if (options.all) callback(null, usable)
        else callback(null, usable[0]!.address, usable[0]!.family)
      })
      .catch((err: NodeJS.ErrnoException) => callback(err, ''))
  }
}

export interface OutboundRequest {
  method: string
  headers: Record<string, string>
  body?: string
  timeoutMs: number
  /** the answer body is read up to this many bytes; beyond, it is cut off (`truncated`) */
  maxResponseBytes?: number
}

export interface OutboundResponse {
  status: number
  body: Buffer
  truncated: boolean
}

/**
 * One HTTP(S) request to a tenant-supplied URL under the guard. A 3xx answer is returned as
 * it is (never followed), so a redirect cannot lead to a refused address.
 */
export async function outboundRequest(policy: OutboundPolicy, raw: string | URL, req: OutboundRequest): Promise<OutboundResponse> {
  try {
    return await send(policy, raw, req)
  } catch (err) {
    refusedAtCallTime(err)
  }
}

function send(policy: OutboundPolicy, raw: string | URL, req: OutboundRequest): Promise<OutboundResponse> {
  const t = staticCheck(policy, raw)
  const maxBytes = req.maxResponseBytes ?? 1024 * 1024
  const client = t.url.protocol === 'https:' ? https : http
  return new Promise<OutboundResponse>((resolve, reject) => {
    const r = client.request(
      {
        protocol: t.url.protocol,
        hostname: t.host,
        port: t.port,
        path: `${t.url.pathname}${t.url.search}`,
        method: req.method,
        headers: req.body === undefined ? req.headers : { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) },
        lookup: guardedLookup(policy, t),
        // no shared keep-alive agent: every request runs its own (guarded) lookup
        agent: false,
        signal: AbortSignal.timeout(req.timeoutMs),
      },
      (res) => {
        const chunks: Buffer[] = []
        let size = 0
        const status = res.statusCode ?? 0
        res.on('data', (c: Buffer) => {
          size += c.length
          if (size > maxBytes) {
            res.destroy()
            resolve({ status, body: Buffer.concat(chunks), truncated: true })
            return
          }
          chunks.push(c)
        })
        res.on('end', () => resolve({ status, body: Buffer.concat(chunks), truncated: false }))
        res.on('error', reject)
      },
    )
    r.on('error', reject)
    r.end(req.body)
  })
}
