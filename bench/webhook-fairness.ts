// bench:webhooks: how long a healthy tenant's webhook waits behind another tenant whose endpoints
// accept connections and never answer. Tenant A gets ENDPOINTS hanging endpoints and BURST
// deliveries on each, all enqueued first; then tenant B's one delivery to a receiver that answers
// at once. Run twice: with the delivery gate as configured, and with it out of the way (caps as
// large as the worker, no circuit), which is how delivery worked before. Prints a table.
//   npm run bench:webhooks -- --burst 30 --endpoints 2
// It prints numbers; it asserts nothing.
import { parseArgs } from 'node:util'
import { randomBytes } from 'node:crypto'
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { loadConfigOrExit, type Config } from '../platform/config.js'
import { parseAllowList } from '../platform/outbound-address.js'
import { startPlatform } from '../scripts/composition-root.js'
import { createTenant } from '../billing-api/tenants/index.js'
import { newId } from '../platform/ids.js'

const { values: args } = parseArgs({ options: { burst: { type: 'string' }, endpoints: { type: 'string' }, 'give-up-s': { type: 'string' } } })
const BURST = Number(args.burst ?? 30)
const ENDPOINTS = Number(args.endpoints ?? 2)
const GIVE_UP_MS = Number(args['give-up-s'] ?? 180) * 1000

const hung = new Set<net.Socket>()
const hangServer = net.createServer((s) => {
  hung.add(s)
  s.on('close', () => hung.delete(s))
})
let arrived: (() => void) | undefined
const receiver = http.createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    res.writeHead(200).end()
    arrived?.()
  })
})
const listen = async (s: net.Server) => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`
}
const hangUrl = await listen(hangServer)
const receiverUrl = await listen(receiver)
const base = loadConfigOrExit()

async function run(label: string, webhooks: Config['webhooks']): Promise<string[]> {
  // The receivers run on 127.0.0.1, which the SSRF guard refuses unless allowed.
  const outbound = { allow: parseAllowList('127.0.0.1') }
  const config: Config = { ...base, port: 0, logLevel: 'fatal', redisPrefix: `bench-webhooks-${randomBytes(3).toString('hex')}`, webhooks, outbound }
  const platform = await startPlatform(config, { services: ['billing-api', 'scheduler'], migrate: true, schedule: false, relay: false })
  const conn = platform.ctx.orm.em.getConnection()
  const deliver = async (tenantId: string, environmentId: string, url: string, n: number) => {
    const endpoint = newId('wh')
    await conn.execute(`INSERT INTO webhook_endpoints (id, tenant_id, environment_id, url, secret) VALUES (?, ?, ?, ?, 'whsec_bench')`, [endpoint, tenantId, environmentId, url])
    const ids = Array.from({ length: n }, () => newId('whdel'))
    for (const id of ids) {
      await conn.execute(`INSERT INTO webhook_deliveries (id, tenant_id, environment_id, endpoint_id, event_id, event_name, payload) VALUES (?, ?, ?, ?, ?, 'customer.created', '{}'::jsonb)`, [id, tenantId, environmentId, endpoint, newId('evt')])
    }
    return ids
  }
  try {
    const a = await createTenant(platform.ctx.orm.em.fork(), { name: 'bench hanging' }, platform.ctx.config.apiKeyHashing)
    const b = await createTenant(platform.ctx.orm.em.fork(), { name: 'bench healthy' }, platform.ctx.config.apiKeyHashing)
    const burst: string[] = []
    for (let e = 0; e < ENDPOINTS; e++) burst.push(...(await deliver(a.tenantId, a.environments.production, `${hangUrl}/a${e}`, BURST)))
    const [bDelivery] = await deliver(b.tenantId, b.environments.production, `${receiverUrl}/b`, 1)
    await platform.ctx.webhooks!.enqueue(burst)
    const t0 = Date.now()
    const got = new Promise<number>((resolve) => (arrived = () => resolve(Date.now() - t0)))
    await platform.ctx.webhooks!.enqueue([bDelivery])
    const waited = await Promise.race([got, new Promise<undefined>((r) => setTimeout(r, GIVE_UP_MS))])
    const openSockets = hung.size
    return [label, String(ENDPOINTS * BURST), waited === undefined ? `> ${GIVE_UP_MS}` : String(waited), String(openSockets)]
  } finally {
    for (const s of hung) s.destroy()
    await platform.stop()
  }
}

const gated = base.webhooks
const ungated = { ...gated, endpointConcurrency: gated.workerConcurrency, tenantConcurrency: gated.workerConcurrency, circuitFailures: 0 }
const rows = [
  await run(`gate (endpoint ${gated.endpointConcurrency}, tenant ${gated.tenantConcurrency}, worker ${gated.workerConcurrency})`, gated),
  await run(`no gate (one FIFO, worker ${gated.workerConcurrency})`, ungated),
]
hangServer.close()
receiver.close()
const head = ['delivery', "A's hanging deliveries ahead", "B's delay ms", "A's connections open when B arrived"]
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join(' | ')
console.log(`\nwebhook timeout ${gated.timeoutMs} ms; node ${process.version}; ${(await import('node:os')).cpus().length} CPUs\n`)
console.log([line(head), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n'))
