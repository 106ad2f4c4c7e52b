// The SSRF guard's address rules, class by class, in IPv4, IPv6 and IPv4-mapped forms, and
// the allow-list's matching.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { forbiddenAddressClass, parseAllowList, parseIp, refusalFor } from './outbound-address.js'

const classOf = (address: string) => {
  const ip = parseIp(address)
  assert.ok(ip, `${address} parses`)
  return forbiddenAddressClass(ip)
}

test('IPv4: every forbidden class, its edges, and public neighbours', () => {
  const cases: [string, string | null][] = [
    ['0.0.0.0', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['11.0.0.1', null],
    ['100.63.255.255', null],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['100.128.0.0', null],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.15.255.255', null],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.0', null],
    ['192.168.1.1', 'private'],
    ['192.169.0.1', null],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['8.8.8.8', null],
    ['93.184.216.34', null],
  ]
  for (const [address, kind] of cases) assert.equal(classOf(address), kind, address)
})

test('IPv6: unspecified, loopback, link-local, unique local, multicast; public is allowed', () => {
  const cases: [string, string | null][] = [
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fc00::1', 'unique local'],
    ['fd12:3456:789a::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['2606:4700:4700::1111', null],
    ['2001:4860:4860::8888', null],
  ]
  for (const [address, kind] of cases) assert.equal(classOf(address), kind, address)
})

test('IPv4-mapped (dotted and hex), NAT64 and 6to4 forms are judged by their IPv4 address', () => {
  const cases: [string, string | null][] = [
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback'],
    ['0:0:0:0:0:ffff:7f00:0001', 'IPv4-mapped loopback'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local'],
    ['::ffff:10.1.2.3', 'IPv4-mapped private'],
    ['::ffff:8.8.8.8', null],
    ['64:ff9b::7f00:1', 'NAT64 loopback'],
    ['2002:c0a8:0101::1', '6to4 private'],
    ['::127.0.0.1', 'IPv4-compatible'],
  ]
  for (const [address, kind] of cases) assert.equal(classOf(address), kind, address)
})

test('parseIp refuses what is not an address', () => {
  for (const s of ['localhost', '256.0.0.1', '1.2.3', '1:2:3:4:5:6:7:8:9', '1::2::3', 'gggg::1', '12345::1', '']) {
    assert.equal(parseIp(s), null, s)
  }
})

test('the allow-list: host names match the URL host, addresses and ranges match the resolved address, ports restrict', () => {
  const allow = parseAllowList('localhost:8080, 127.0.0.1:9000, 10.1.0.0/16, [::1], fd00::/8')
  // a host name entry exempts whatever it resolves to, on its port only
  assert.equal(refusalFor(allow, 'localhost', 8080, '127.0.0.1'), null)
  assert.equal(refusalFor(allow, 'LOCALHOST.', 8080, '::1'), null)
  assert.equal(refusalFor(allow, 'localhost', 8081, '127.0.0.1'), 'localhost resolves to 127.0.0.1 (loopback address)')
  // an address entry with a port
  assert.equal(refusalFor(allow, '127.0.0.1', 9000, '127.0.0.1'), null)
  assert.equal(refusalFor(allow, '127.0.0.1', 9001, '127.0.0.1'), '127.0.0.1 is not allowed (loopback address)')
  // ranges, any port, also for a name resolving into them
  assert.equal(refusalFor(allow, 'erp.internal', 443, '10.1.200.3'), null)
  assert.equal(refusalFor(allow, 'erp.internal', 443, '10.2.0.1'), 'erp.internal resolves to 10.2.0.1 (private address)')
  assert.equal(refusalFor(allow, '::1', 1234, '::1'), null)
  assert.equal(refusalFor(allow, 'fd00::5', 80, 'fd00::5'), null)
  // an IPv4 entry also covers its IPv4-mapped form (same 16 bytes)
  assert.equal(refusalFor(allow, 'x.test', 9000, '::ffff:127.0.0.1'), null)
  // public addresses need no entry
  assert.equal(refusalFor([], 'example.com', 443, '93.184.216.34'), null)
  assert.equal(refusalFor([], '169.254.169.254', 80, '169.254.169.254'), '169.254.169.254 is not allowed (link-local address)')
})

test('the allow-list parser names a bad entry', () => {
  assert.deepEqual(parseAllowList(''), [])
  assert.throws(() => parseAllowList('10.0.0.0/33'), /"10.0.0.0\/33": bad CIDR range/)
  assert.throws(() => parseAllowList('localhost:99999'), /bad port/)
  assert.throws(() => parseAllowList('http://x'), /is not a host/)
})
