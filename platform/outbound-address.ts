// Pure address rules for outbound calls to tenant-supplied URLs (SSRF guard): which IP
// addresses and host names are never called, and the operator's allow-list that exempts some
// (local development, tests). No I/O here; outbound-url-guard.ts resolves and enforces.

/** An IP address as 16 bytes (IPv4 as its IPv4-mapped IPv6 form) plus its written family. */
export interface ParsedIp {
  bytes: Uint8Array
  family: 4 | 6
}

function parseV4(s: string): Uint8Array | null {
  const parts = s.split('.')
  if (parts.length !== 4) return null
  const out = new Uint8Array(4)
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null
    out[i] = Number(p)
  }
  return out
}

function parseV6(s: string): Uint8Array | null {
  let text = s.toLowerCase()
  const zone = text.indexOf('%')
  if (zone >= 0) text = text.slice(0, zone)
  let tail: Uint8Array | null = null
  const lastColon = text.lastIndexOf(':')
  if (text.slice(lastColon + 1).includes('.')) {
    tail = parseV4(text.slice(lastColon + 1))
    if (!tail) return null
    text = `${text.slice(0, lastColon + 1)}0:0`
  }
  const halves = text.split('::')
  if (halves.length > 2) return null
  const groups = (h: string) => (h === '' ? [] : h.split(':'))
  const head = groups(halves[0]!)
  const rest = halves.length === 2 ? groups(halves[1]!) : []
  const missing = 8 - head.length - rest.length
  if ((halves.length === 1 && missing !== 0) || (halves.length === 2 && missing < 1)) return null
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest]
  const out = new Uint8Array(16)
  for (let i = 0; i < 8; i++) {
    const g = all[i]!
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null
    const v = parseInt(g, 16)
    out[i * 2] = v >> 8
    out[i * 2 + 1] = v & 0xff
  }
  if (tail) out.set(tail, 12)
  return out
}

const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]

/** Parses an IPv4 or IPv6 literal (brackets and zone ids allowed); null when it is not one. */
export function parseIp(text: string): ParsedIp | null {
  const s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text
  const v4 = parseV4(s)
  if (v4) return { bytes: Uint8Array.from([...MAPPED_PREFIX, ...v4]), family: 4 }
  const v6 = s.includes(':') ? parseV6(s) : null
  return v6 ? { bytes: v6, family: 6 } : null
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array, bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const mask = 0x80 >> (i % 8)
    if ((bytes[i >> 3]! & mask) !== (prefix[i >> 3]! & mask)) return false
  }
  return true
}

interface Range {
  prefix: Uint8Array
  bits: number
  kind: string
}

const v4Range = (cidr: string, kind: string): Range => {
  const [addr, bits] = cidr.split('/')
  return { prefix: parseIp(addr!)!.bytes, bits: 96 + Number(bits), kind }
}
const v6Range = (cidr: string, kind: string): Range => {
  const [addr, bits] = cidr.split('/')
  return { prefix: parseIp(addr!)!.bytes, bits: Number(bits), kind }
}

// Order matters only for the name in the message: the first match names the class.
const V4_FORBIDDEN: Range[] = [
  v4Range('0.0.0.0/8', 'unspecified'),
  v4Range('10.0.0.0/8', 'private'),
  v4Range('100.64.0.0/10', 'carrier-grade NAT'),
  v4Range('127.0.0.0/8', 'loopback'),
  v4Range('169.254.0.0/16', 'link-local'),
  v4Range('172.16.0.0/12', 'private'),
  v4Range('192.0.0.0/24', 'IETF protocol assignments'),
  v4Range('192.168.0.0/16', 'private'),
  v4Range('198.18.0.0/15', 'benchmarking'),
  v4Range('224.0.0.0/4', 'multicast'),
  v4Range('255.255.255.255/32', 'broadcast'),
  v4Range('240.0.0.0/4', 'reserved'),
]

const V6_FORBIDDEN: Range[] = [
  v6Range('::/128', 'unspecified'),
  v6Range('::1/128', 'loopback'),
  v6Range('::/96', 'IPv4-compatible'),
  v6Range('100::/64', 'discard-only'),
  v6Range('fc00::/7', 'unique local'),
  v6Range('fe80::/10', 'link-local'),
  v6Range('fec0::/10', 'site-local'),
  v6Range('ff00::/8', 'multicast'),
]

/** IPv6 forms that carry an IPv4 address: judged by that address. */
const V4_EMBEDDING: { range: Range; offset: number; name: string }[] = [
  { range: v6Range('::ffff:0:0/96', ''), offset: 12, name: 'IPv4-mapped' },
  { range: v6Range('64:ff9b::/96', ''), offset: 12, name: 'NAT64' },
  { range: v6Range('2002::/16', ''), offset: 2, name: '6to4' },
]

/**
 * Why an address may not be called ("loopback", "private", "IPv4-mapped loopback", ...), or
 * null for a public address.
 */
export function forbiddenAddressClass(ip: ParsedIp): string | null {
  for (const e of V4_EMBEDDING) {
    if (!startsWith(ip.bytes, e.range.prefix, e.range.bits)) continue
    const embedded = Uint8Array.from([...MAPPED_PREFIX, ...ip.bytes.subarray(e.offset, e.offset + 4)])
    const kind = V4_FORBIDDEN.find((r) => startsWith(embedded, r.prefix, r.bits))?.kind
    if (!kind) return null
    return ip.family === 4 ? kind : `${e.name} ${kind}`
  }
  return V6_FORBIDDEN.find((r) => startsWith(ip.bytes, r.prefix, r.bits))?.kind ?? null
}

/** Cloud metadata services reachable by name (the addresses are link-local and refused too). */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal'])

/** Lower-cased, without a trailing dot or IPv6 brackets. */
export function normalizeHost(host: string): string {
  const h = host.toLowerCase().replace(/\.$/, '')
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h
}

export function isMetadataHost(host: string): boolean {
  return METADATA_HOSTS.has(normalizeHost(host))
}

/** One OUTBOUND_URL_ALLOW entry: a host name, an IP address or a CIDR range, optionally with a port. */
export type AllowEntry =
  | { type: 'host'; host: string; port?: number }
  | { type: 'range'; prefix: Uint8Array; bits: number; port?: number }

function port(text: string | undefined, entry: string): number | undefined {
  if (text === undefined) return undefined
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) throw new Error(`"${entry}": bad port`)
  return Number(text)
}

/**
 * Parses a comma-separated allow-list: `localhost:8080`, `127.0.0.1`, `[::1]:9000`,
 * `10.1.0.0/16`, `fd00::/8`. A host name entry matches the URL's host name; an address or
 * range entry matches the address the name resolves to. Throws with the bad entry named.
 */
export function parseAllowList(raw: string): AllowEntry[] {
  const entries: AllowEntry[] = []
  for (const item of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    const cidr = /^\[?([0-9a-fA-F:.]+)\]?\/(\d{1,3})$/.exec(item)
    if (cidr) {
      const ip = parseIp(cidr[1]!)
      const bits = Number(cidr[2])
      if (!ip || bits > (ip.family === 4 ? 32 : 128)) throw new Error(`"${item}": bad CIDR range`)
      entries.push({ type: 'range', prefix: ip.bytes, bits: ip.family === 4 ? 96 + bits : bits })
      continue
    }
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(item)
    const hostPort = /^([^:]+)(?::(\d+))?$/.exec(item)
    const [host, portText] = bracketed ? [bracketed[1]!, bracketed[2]] : hostPort ? [hostPort[1]!, hostPort[2]] : [item, undefined]
    const ip = parseIp(host)
    if (ip) {
      entries.push({ type: 'range', prefix: ip.bytes, bits: 128, port: port(portText, item) })
    } else if (/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(host)) {
      entries.push({ type: 'host', host: normalizeHost(host), port: port(portText, item) })
    } else {
      throw new Error(`"${item}" is not a host, host:port, IP address or CIDR range`)
    }
  }
  return entries
}

const portMatches = (e: AllowEntry, p: number) => e.port === undefined || e.port === p

export function hostAllowed(allow: AllowEntry[], host: string, p: number): boolean {
  const h = normalizeHost(host)
  return allow.some((e) => e.type === 'host' && e.host === h && portMatches(e, p))
}

export function addressAllowed(allow: AllowEntry[], ip: ParsedIp, p: number): boolean {
  return allow.some((e) => e.type === 'range' && portMatches(e, p) && startsWith(ip.bytes, e.prefix, e.bits))
}

/**
 * The verdict for one resolved address of `host:port`: null when it may be called, else the
 * reason. Allow-list entries win over every class, including metadata.
 */
export function refusalFor(allow: AllowEntry[], host: string, p: number, address: string): string | null {
  if (hostAllowed(allow, host, p)) return null
  const ip = parseIp(address)
  if (!ip) return `${address} is not an IP address`
  if (addressAllowed(allow, ip, p)) return null
  const kind = forbiddenAddressClass(ip)
  if (!kind) return null
  return normalizeHost(host) === normalizeHost(address)
    ? `${address} is not allowed (${kind} address)`
    : `${normalizeHost(host)} resolves to ${address} (${kind} address)`
}
