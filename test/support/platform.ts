// Boots the real platform in the test process: Postgres and Redis over TCP, the Kafka-protocol
// broker over TCP and the embedded ClickHouse engine (its own data directory per test process).
// Each platform gets its own Kafka topic, consumer group and BullMQ prefix, so test files can
// run in any order and never see each other's events.
import { randomBytes } from 'node:crypto'
import { after, before } from 'node:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Clock } from '../../platform/clock.js'
import { loadConfig, type Config } from '../../platform/config.js'
import { parseAllowList } from '../../platform/outbound-address.js'
import { startPlatform, type Platform, type PlatformOptions } from '../../scripts/composition-root.js'
import { createTenant, type CreatedTenant } from '../../billing-api/tenants/create-tenant.js'

export interface TestPlatform extends Platform {
  config: Config
  client(apiKey?: string, environmentId?: string): ApiClient
  newTenant(name?: string): Promise<CreatedTenant & { api: ApiClient }>
}

/**
 * Tests deliver webhooks and integration calls to receivers they start on 127.0.0.1, which the
 * SSRF guard refuses by default: the test allow-list exempts that one address (any port), and
 * nothing else (`localhost`, other loopback addresses and private ranges stay refused).
 */
export const TEST_OUTBOUND_ALLOW = '127.0.0.1'

export function testConfig(overrides: Partial<Config> = {}): Config {
  const id = `${process.pid}-${randomBytes(3).toString('hex')}`
  const base = loadConfig(process.env)
  const chdbPath = join(base.dataDir, 'chdb-test', String(process.pid))
  return {
    ...base,
    host: '127.0.0.1',
    port: 0,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'fatal',
    eventsTopic: `events-test-${id}`,
    // Test topics are created on first use by the local broker, with its default of 4 partitions.
    eventsPartitions: 4,
    // One consumer, so a test can watch `platform.aggregator`; tests of several writers start them.
    aggregatorConsumers: 1,
    // In this thread (the default), so a test can hook into its writes; test/e2e/aggregator-thread.test.ts runs the worker.
    aggregatorThread: 'main',
    // Ingest on the main thread too, so a test reads `platform.spool`; test/e2e/ingest-thread.test.ts runs the worker.
    ingestThread: 'main',
    systemEventsTopic: `system-events-test-${id}`,
    aggregatorGroupId: `aggregator-test-${id}`,
    redisPrefix: `mltest-${id}`,
    // One ClickHouse database per platform: several platforms of one test process share the
    // engine (one data directory per process), and a database is what one aggregator group writes.
    clickhouse: { ...base.clickhouse, chdbPath, database: `mlt_${id.replace('-', '_')}` },
    spool: { ...base.spool, dir: join(base.dataDir, 'spool-test', id) },
    outbound: { allow: parseAllowList(TEST_OUTBOUND_ALLOW) },
    // Tests bill months long past with manual clocks: no acceptance window, keys kept forever
    // (test/e2e/dedup-horizon.test.ts sets a window).
    ingestTimeWindow: { ...base.ingestTimeWindow, maxAgeDays: 0 },
    retention: { ...base.retention, dedupHorizonDays: 0 },
    ...overrides,
  }
}

let cleanedChdb = false

export async function startTestPlatform(opts: PlatformOptions & { clock?: Clock; config?: Partial<Config> } = {}): Promise<TestPlatform> {
  const config = testConfig(opts.config)
  if (!cleanedChdb) {
    rmSync(config.clickhouse.chdbPath, { recursive: true, force: true })
    cleanedChdb = true
  }
  const platform = await startPlatform(config, { migrate: 'clickhouse', schedule: false, relay: false, ...opts })
  const client = (apiKey?: string, environmentId?: string) => new ApiClient(platform.url, apiKey, environmentId)
  return {
    ...platform,
    config,
    client,
    async stop() {
      await platform.stop()
      rmSync(config.spool.dir, { recursive: true, force: true })
    },
    async newTenant(name = 'Test tenant') {
      const created = await createTenant(platform.ctx.orm.em.fork(), { name }, config.apiKeyHashing)
      return { ...created, api: client(created.apiKey) }
    },
  }
}

/**
 * The platform of one test file: started before its tests and stopped after them. The returned
 * object is filled in by the `before` hook, so tests use it directly.
 */
export function usePlatform(opts: Parameters<typeof startTestPlatform>[0] = {}): TestPlatform {
  const p = {} as TestPlatform
  before(async () => {
    Object.assign(p, await startTestPlatform(opts))
  })
  after(async () => {
    await p.stop?.()
  })
  return p
}

/** Raw SQL on the platform's database (assertions on rows the API does not show). */
export const sqlOn = (p: TestPlatform) => (q: string, params: unknown[] = []): Promise<any[]> =>
  p.ctx.orm.em.fork().getConnection().execute(q, params)

export interface ApiResponse<T = any> {
  status: number
  body: T
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey?: string,
    readonly environmentId?: string,
  ) {}

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const h: Record<string, string> = { ...headers }
    if (this.apiKey) h['x-api-key'] = this.apiKey
    if (this.environmentId) h['x-environment-id'] = this.environmentId
    let payload: string | undefined
    if (body !== undefined) {
      h['content-type'] ??= 'application/json'
      payload = typeof body === 'string' ? body : JSON.stringify(body)
    }
    const res = await fetch(this.baseUrl + path, { method, headers: h, body: payload })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed as T }
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path)
  }
  post<T = any>(path: string, body?: unknown) {
    return this.request<T>('POST', path, body ?? {})
  }
  put<T = any>(path: string, body?: unknown) {
    return this.request<T>('PUT', path, body ?? {})
  }
  delete<T = any>(path: string) {
    return this.request<T>('DELETE', path)
  }
}

/** Polls until `check` returns a value (not undefined) or the deadline passes. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await check()
      if (v !== undefined) return v
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
