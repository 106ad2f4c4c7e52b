// The SSRF guard's I/O half against a real local HTTP server: the socket's own lookup accepts
// an allowed name and refuses a forbidden one, redirects come back unfollowed, long answers are
// cut off, and what needs no DNS is refused before any lookup.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseAllowList } from './outbound-address.js'
import { checkOutboundUrl, OutboundUrlRefused, outboundRequest, validateOutboundUrl } from './outbound-url-guard.js'
import { ValidationError } from './errors.js'

let server: http.Server
let port = 0
const seen: string[] = []

before(async () => {
  server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers['content-length'] ?? ''}`)
    req.resume()
    if (req.url === '/redirect') res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end()
    else if (req.url === '/long') res.writeHead(200).end('x'.repeat(10_000))
    else res.writeHead(201).end('{"id":"ok"}')
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  port = (server.address() as AddressInfo).port
})
after(() => server.close())

const req = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}', timeoutMs: 2000 }
const refused = (re: RegExp) => (err: unknown) => err instanceof OutboundUrlRefused && re.test(err.message)

test('a name on the allow-list resolves through the guarded lookup and is called', async () => {
  const res = await outboundRequest({ allow: parseAllowList(`localhost:${port}`) }, `http://localhost:${port}/hook?x=1`, req)
  assert.deepEqual({ status: res.status, body: res.body.toString(), truncated: res.truncated }, { status: 201, body: '{"id":"ok"}', truncated: false })
  assert.equal(seen.at(-1), 'POST /hook?x=1 7')
})

test('the same name off the allow-list is refused by the lookup itself; nothing is sent', async () => {
  const before = seen.length
  await assert.rejects(outboundRequest({ allow: [] }, `http://localhost:${port}/hook`, req), refused(/^outbound URL refused: localhost resolves to 127\.0\.0\.1 \(loopback address\)$/))
  await assert.rejects(outboundRequest({ allow: parseAllowList(`localhost:${port + 1}`) }, `http://localhost:${port}/hook`, req), refused(/loopback/), 'another port')
  assert.equal(seen.length, before)
})

test('a redirect is returned, not followed; a long answer is cut off', async () => {
  const allow = { allow: parseAllowList(`127.0.0.1:${port}`) }
  const redirected = await outboundRequest(allow, `http://127.0.0.1:${port}/redirect`, req)
  assert.equal(redirected.status, 307)
  const long = await outboundRequest(allow, `http://127.0.0.1:${port}/long`, { ...req, maxResponseBytes: 1000 })
  assert.equal(long.truncated, true)
  assert.ok(long.body.length <= 1000)
})

test('refused without DNS: other schemes, credentials in the URL, metadata names, literal addresses', async () => {
  const none = { allow: [] }
  await assert.rejects(outboundRequest(none, 'ftp://example.com/x', req), refused(/scheme ftp: is not http or https/))
  await assert.rejects(outboundRequest(none, 'http://user:pw@example.com/', req), refused(/credentials in the URL/))
  await assert.rejects(outboundRequest(none, 'http://metadata.google.internal./computeMetadata/v1/', req), refused(/metadata\.google\.internal is a cloud metadata host/))
  await assert.rejects(outboundRequest(none, 'http://[::ffff:127.0.0.1]:80/', req), refused(/::ffff:7f00:1 is not allowed \(IPv4-mapped loopback address\)/))
  await assert.rejects(outboundRequest(none, 'http://2130706433/', req), refused(/127\.0\.0\.1 is not allowed \(loopback address\)/))
})

test('configuration time: every resolved address is judged; a refusal becomes a 400 naming the field', async () => {
  await assert.rejects(checkOutboundUrl({ allow: [] }, `http://localhost:${port}/`), refused(/localhost resolves to 127\.0\.0\.1/))
  await checkOutboundUrl({ allow: parseAllowList('127.0.0.0/8') }, `http://localhost:${port}/`)
  await assert.rejects(checkOutboundUrl({ allow: [] }, 'http://no-such-host.invalid/'), refused(/no-such-host\.invalid does not resolve \(ENOTFOUND\)/))
  await assert.rejects(validateOutboundUrl({ allow: [] }, 'http://10.0.0.1/', 'url'), (err: unknown) =>
    err instanceof ValidationError && err.httpStatus === 400 && err.message === 'url: outbound URL refused: 10.0.0.1 is not allowed (private address)')
})
