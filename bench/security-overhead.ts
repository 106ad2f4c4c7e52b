// bench:security: what the security checks add per request. The request rate limit is one
// Redis round trip per authenticated request (sequential, and with CONCURRENCY in flight), and
// so is the failed-authentication block lookup of the source address (platform/abuse-limit.ts);
// the keyed API key hash is computed on every authentication cache miss; the SSRF check runs
// when a webhook endpoint or integration URL is stored. Prints a table; asserts nothing.
//   npm run bench:security -- --requests 20000
import { parseArgs } from 'node:util'
import { randomBytes } from 'node:crypto'
import { candidateHashes, hashApiKey, RequestRateLimiter } from '../billing-api/auth/index.js'
import { loadConfig } from '../platform/config.js'
import { checkOutboundUrl } from '../platform/outbound-url-guard.js'
import { AbuseLimiter } from '../platform/abuse-limit.js'
import { createQueueRedis } from '../platform/redis.js'

const { values: args } = parseArgs({ options: { requests: { type: 'string' }, concurrency: { type: 'string' } } })
const N = Number(args.requests ?? 20_000)
const CONCURRENCY = Number(args.concurrency ?? 16)
const config = loadConfig(process.env, { kafkaBrokers: ['unused:9092'] })

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
const us = (ms: number) => (ms * 1000).toFixed(1)
const rows: string[][] = []

async function measure(label: string, n: number, fn: (i: number) => unknown): Promise<void> {
  const samples: number[] = []
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    const s = performance.now()
    await fn(i)
    samples.push(performance.now() - s)
  }
  const total = performance.now() - t0
  samples.sort((a, b) => a - b)
  rows.push([label, String(n), us(quantile(samples, 0.5)), us(quantile(samples, 0.99)), String(Math.round(n / (total / 1000)))])
}

const redis = createQueueRedis(config.redisUrl, config.redisCommandTimeoutMs)
try {
  const prefix = `bench-security-${randomBytes(3).toString('hex')}`
  const limiter = new RequestRateLimiter(redis, prefix, { windowSeconds: 60, perKey: 1_000_000_000, perTenant: 1_000_000_000 })
  const subject = { apiKeyId: 'key_bench', tenantId: 'tenant_bench' }
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve))
  await measure('rate limit admit (Redis Lua), sequential', N, () => limiter.admit(subject))
  const t0 = performance.now()
  let next = 0
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next++ < N) await limiter.admit(subject)
  }))
  const total = performance.now() - t0
  rows.push([`rate limit admit, ${CONCURRENCY} in flight`, String(N), '-', '-', String(Math.round(N / (total / 1000)))])
  const off = new RequestRateLimiter(redis, prefix, { windowSeconds: 60, perKey: 0, perTenant: 0 })
  await measure('rate limit admit, limits 0 (off)', N, () => off.admit(subject))
  await redis.del(`${prefix}:ratelimit:key:key_bench`, `${prefix}:ratelimit:tenant:tenant_bench`)
  const abuse = new AbuseLimiter(redis, prefix, config.abuse)
  await measure('address block lookup (Redis Lua), sequential', N, () => abuse.assertNotBlocked('auth_failures', '203.0.113.1'))

  const key = `ml_${randomBytes(32).toString('base64url')}`
  await measure('API key keyed hash (HMAC over SHA-256)', N, () => hashApiKey(config.apiKeyHashing, key))
  await measure('API key lookup candidates (current, legacy)', N, () => candidateHashes(config.apiKeyHashing, key))

  const policy = { allow: [] }
  await measure('SSRF check, IP literal (no DNS)', N, () => checkOutboundUrl(policy, 'https://93.184.216.34/hook').catch(() => undefined))
  await measure('SSRF check, host name (DNS lookup, /etc/hosts)', Math.min(N, 2000), () => checkOutboundUrl(policy, 'http://localhost:9/hook').catch(() => undefined))
} finally {
  redis.disconnect()
}

const header = ['operation', 'calls', 'p50 µs', 'p99 µs', 'per second']
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')
console.log(line(header))
for (const r of rows) console.log(line(r))
