// bench:billing-day: the first of the month at scale. N subscriptions (default 10,000) whose
// monthly period ended at the start of this month, each with 10 usage lines of mixed price models
// (flat per unit, slab, volume, package); coupons on 10 %, taxes on 50 %, prepaid wallets on 10 %,
// 5 % in a hierarchy (a PARENT pooling one INHERITED child's usage). Then, exactly as the
// scheduler does it: the `subscription-billing` job (every due invoice drafted with its lines,
// coupons, usage analytics, the period advanced, `invoice.drafted` in the outbox for the
// webhooks), and the `invoice-finalization` job (numbers, taxes, wallet debits).
//   npm run bench:billing-day -- --subscriptions 10000 [--events-per-line 3] [--batch 200] [--concurrency 2]
//     [--variants 200x2,200x4,500x2 --rounds 2] [--profile drafting.cpuprofile] [--skip-finalize] [--next-month [--profile-next next.cpuprofile]]
// Set-up is not what is measured: one template customer and subscription are created through
// the API, then cloned in Postgres; the usage is generated inside ClickHouse into the very rows
// the aggregator writes (meter_events, meter_buckets), as bench:usage --sql-events does.
// Without an aggregator in this process the ingestion watermark is not consulted
// (BILLING_WAIT_FOR_INGESTION=false here). It prints figures and asserts only that every
// subscription was billed once and that the audited invoices equal their previews.
import { parseArgs } from 'node:util'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfigOrExit } from '../platform/config.js'
import { registry } from '../platform/metrics.js'
import { startPlatform } from '../scripts/composition-root.js'
import { createTenant } from '../billing-api/tenants/index.js'
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { computeSubscriptionInvoice, runBilling } from '../billing-api/billing/index.js'
import { SubscriptionSchema } from '../billing-api/subscriptions/subscription.entity.js'

const { values: args } = parseArgs({
  options: {
    subscriptions: { type: 'string' }, 'events-per-line': { type: 'string' }, batch: { type: 'string' }, concurrency: { type: 'string' }, 'skip-finalize': { type: 'boolean' },
    // levers compared in one session: after the measured run, the drafts are deleted and the run is
    // repeated per variant ("<batch>x<concurrency>", rounds interleaved); medians and ratios printed
    variants: { type: 'string' }, rounds: { type: 'string' },
    // a CPU profile (.cpuprofile) of the measured drafting run only; profile-next: of the --next-month run
    profile: { type: 'string' }, 'profile-next': { type: 'string' },
    // after finalization: the next month's run, with late usage of the finalized month for 1 % of the customers
    'next-month': { type: 'boolean' },
  },
})
const SUBS = Number(args.subscriptions ?? 10_000)
const PER_LINE = Number(args['events-per-line'] ?? 3)
const LINES = 10
const now = new Date()
const PERIOD_END = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)
const PERIOD_START = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)

const base = loadConfigOrExit()
const chdbPath = join(base.dataDir, 'bench-billing-day-chdb')
rmSync(chdbPath, { recursive: true, force: true })
// Its own job queues: a scheduler of another platform on this Redis (npm run up) keeps its
// recurring jobs there, and this process's worker would run them, billing the subscriptions
// being set up (without their lines yet) before the run this bench times.
const config = {
  ...base, clickhouse: { ...base.clickhouse, chdbPath }, port: 0, finalizationDelayMinutes: 0, redisPrefix: `bench-billing-day-${process.pid}-${Date.now()}`,
  billing: {
    ...base.billing, waitForIngestion: false,
    batchSize: Number(args.batch ?? base.billing.batchSize), runConcurrency: Number(args.concurrency ?? base.billing.runConcurrency),
  },
}
// the real time, moved a month ahead for --next-month
let clockOffset = 0
const clock = { now: () => new Date(Date.now() + clockOffset) }
const platform = await startPlatform(config, { services: ['billing-api', 'scheduler'], migrate: true, schedule: false, relay: false, clock })
const conn = platform.ctx.orm.em.getConnection()
const ch = platform.ctx.ch

async function call(apiKey: string, method: string, path: string, body?: unknown): Promise<any> {
  // set-up only: a 503 of an overloaded machine (a connect or pool deadline) is retried
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(platform.url + path, {
      method, headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    })
    const json = await res.json()
    if (res.status === 503 && attempt < 5) {
      await new Promise((r) => setTimeout(r, 500 * attempt))
      continue
    }
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
    return json
  }
}
const seconds = (t: number) => (performance.now() - t) / 1000
const n = (x: number) => Math.round(x).toLocaleString('en-US')
// Set-up statements of 100,000 rows outlive PG_STATEMENT_TIMEOUT_MS (a request's deadline): they
// run without one, each in its own transaction.
const setUp = (sql: string) => platform.ctx.orm.em.fork().transactional(async (tx) => {
  await tx.getConnection().execute('SET LOCAL statement_timeout = 0', [], 'run', tx.getTransactionContext())
  await tx.getConnection().execute(sql, [], 'run', tx.getTransactionContext())
})
/** One row per clone i in [1, SUBS): the template row with the columns of `set` replaced. */
const clone = (table: string, where: string, set: string, filter = 'true') => setUp(
  `INSERT INTO ${table} SELECT (jsonb_populate_record(NULL::${table}, to_jsonb(t) || ${set})).* FROM ${table} t, generate_series(1, ${SUBS - 1}) AS g(i) WHERE ${where} AND ${filter}`,
)

/** Starts a CPU profile when `file` is given; the returned function writes it. */
async function profileTo(file: string | undefined): Promise<() => Promise<void>> {
  if (!file) return async () => undefined
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.start')
  return async () => {
    const { profile } = await session.post('Profiler.stop')
    writeFileSync(file, JSON.stringify(profile))
    session.disconnect()
  }
}

// Statements sent to Postgres by this process (the job runs here), counted at the driver.
let statements = 0
platform.ctx.orm.em.getConnection().getKnex().on('query', () => statements++)

try {
  const t0 = performance.now()
  const tenant = await createTenant(platform.ctx.orm.em.fork(), { name: `bench-billing-day-${Date.now()}` }, config.apiKeyHashing)
  const key = tenant.apiKey
  const env = tenant.environments.production
  const usd = { currency: 'USD', billing_period: 'MONTHLY', type: 'USAGE', invoice_cadence: 'ARREAR' }
  const models = [
    { billing_model: 'FLAT_FEE', amount: '0.0125' },
    { billing_model: 'TIERED', tier_mode: 'SLAB', tiers: [{ up_to: 1000, unit_amount: '0.10' }, { up_to: 5000, unit_amount: '0.05' }, { up_to: null, unit_amount: '0.01' }] },
    { billing_model: 'TIERED', tier_mode: 'VOLUME', tiers: [{ up_to: 1000, unit_amount: '0.08' }, { up_to: null, unit_amount: '0.02', flat_amount: '5.00' }] },
    { billing_model: 'PACKAGE', amount: '3.00', transform_quantity: { divide_by: 500, round: 'up' } },
  ]
  const meters: any[] = []
  for (let i = 0; i < LINES; i++) {
    meters.push(await call(key, 'POST', '/v1/meters', { name: `m${i}`, event_name: `usage_${i}`, aggregation: { type: 'SUM', field: 'n', ...(i === 0 ? { group_by: 'region' } : {}) } }))
  }
  const plan = await call(key, 'POST', '/v1/plans', {
    name: 'Bench plan', prices: meters.map((m, i) => ({ ...usd, meter_id: m.id, display_name: `line ${i}`, ...models[i % models.length] })),
  })
  const customer = await call(key, 'POST', '/v1/customers', { external_id: 'cust-0' })
  const sub = await call(key, 'POST', '/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: new Date(PERIOD_START).toISOString() })
  const coupon = await call(key, 'POST', '/v1/coupons', { name: 'Ten percent', type: 'percentage', percentage_off: '10', duration: 'forever' })
  const couponAssoc = await call(key, 'POST', '/v1/coupon_associations', { coupon_id: coupon.id, subscription_id: sub.id })
  const vat = await call(key, 'POST', '/v1/taxes/rates', { name: 'VAT', code: 'VAT', percentage_value: '20' })
  const taxAssoc = await call(key, 'POST', '/v1/taxes/associations', { tax_rate_id: vat.id, entity_type: 'customer', entity_id: customer.id })
  // clones i = 1..N-1: customers cust-i, their subscriptions and line items; the template is i = 0
  const tag = `b${Date.now().toString(36)}` // ids unique across runs: <prefix>_<tag>_<i>
  const id = (prefix: string) => `'${prefix}_${tag}_' || g.i`
  await clone('customers', `t.id = '${customer.id}'`, `jsonb_build_object('id', ${id('cus')}, 'external_id', 'cust-' || g.i, 'lookup_key', NULL)`)
  await clone('subscriptions', `t.id = '${sub.id}'`, `jsonb_build_object('id', ${id('sub')}, 'customer_id', ${id('cus')}, 'lookup_key', NULL)`)
  const lineRows = await conn.execute<{ id: string }[]>(`SELECT id FROM subscription_line_items WHERE subscription_id = ? ORDER BY created_at, id`, [sub.id])
  for (const [k, l] of lineRows.entries()) {
    await clone('subscription_line_items', `t.id = '${l.id}'`, `jsonb_build_object('id', 'sli_${tag}_' || g.i || '_${k}', 'subscription_id', ${id('sub')})`)
  }
  // coupons on 10 %, taxes on 50 %
  await clone('coupon_associations', `t.id = '${couponAssoc.id}'`, `jsonb_build_object('id', ${id('ca')}, 'subscription_id', ${id('sub')})`, 'g.i % 10 = 0')
  await clone('tax_associations', `t.id = '${taxAssoc.id}'`, `jsonb_build_object('id', ${id('ta')}, 'entity_id', ${id('cus')})`, 'g.i % 2 = 0')
  // 5 % in a hierarchy: i % 40 = 2 is a PARENT, i % 40 = 3 its INHERITED child (billed on the parent's invoice)
  await setUp(`UPDATE subscriptions SET subscription_type = 'PARENT' WHERE id LIKE 'sub_${tag}_%' AND split_part(id, '_', 3)::int % 40 = 2`)
  await setUp(`UPDATE subscriptions SET subscription_type = 'INHERITED', parent_subscription_id = 'sub_${tag}_' || (split_part(id, '_', 3)::int - 1)
                       WHERE id LIKE 'sub_${tag}_%' AND split_part(id, '_', 3)::int % 40 = 3`)
  // prepaid wallets on 10 % (through the API: a wallet is a ledger)
  const walletCustomers = Array.from({ length: Math.floor(SUBS / 10) }, (_, j) => `cus_${tag}_${j * 10 + 5}`).filter((c) => Number(c.split('_')[2]) < SUBS)
  for (let j = 0; j < walletCustomers.length; j += 16) {
    await Promise.all(walletCustomers.slice(j, j + 16).map(async (c) => {
      const w = await call(key, 'POST', '/v1/wallets', { customer_id: c, currency: 'USD', conversion_rate: '1' })
      await call(key, 'POST', `/v1/wallets/${w.id}/top-up`, { credits: '25', transaction_reason: 'PURCHASED', idempotency_key: `top-${w.id}` })
    }))
  }
  const setupSeconds = seconds(t0)

  // A month of usage per customer and line, generated in ClickHouse (the aggregator's rows).
  const t1 = performance.now()
  const events = SUBS * LINES * PER_LINE
  const meterList = `[${meters.map((m) => `'${m.id}'`).join(',')}]`
  /** Usage of [from, to) for customers cust-<i> (every i, or i % `every` = 0), acknowledged at the event time or at `ackedAt`. */
  const generate = async (from: number, to: number, tag: string, ackedAt?: number, every = 1) => {
    const gen = `(SELECT number AS k, intDiv(number, ${LINES * PER_LINE}) * ${every} AS ci, concat('cust-', toString(ci)) AS cust,
      ${meterList}[intDiv(number % ${LINES * PER_LINE}, ${PER_LINE}) + 1] AS meter,
      fromUnixTimestamp64Milli(toInt64(${from} + cityHash64(number, 1, '${tag}') % ${to - from}), 'UTC') AS ts,
      toDecimal128(1 + cityHash64(number, 2, '${tag}') % 400, 12) AS v, ['api', 'batch'][number % 2 + 1] AS src,
      if(meter = '${meters[0].id}', [['eu', 'us'][cityHash64(number, 3) % 2 + 1]], []) AS groups,
      ${ackedAt === undefined ? 'ts' : `fromUnixTimestamp64Milli(toInt64(${ackedAt}), 'UTC')`} AS acked
      FROM numbers(${Math.ceil(SUBS / every) * LINES * PER_LINE}))`
    await ch.command(`INSERT INTO ${ch.table('meter_events')} SELECT '${tenant.tenantId}', '${env}', meter, cust, ts, concat('${tag}', toString(k)), v, '', src, groups, acked FROM ${gen}`)
    await ch.command(`INSERT INTO ${ch.table('meter_buckets')} SELECT '${tenant.tenantId}', '${env}', meter, cust, toStartOfMinute(ts), groups, src,
      v, 1, v, (toDateTime64(0, 3, 'UTC'), '', toDecimal128(0, 12)), [], '', [], '' FROM ${gen}`)
  }
  await generate(PERIOD_START, PERIOD_END, 'e')
  await ch.command(`OPTIMIZE TABLE ${ch.table('meter_buckets')} FINAL`)
  const usageSeconds = seconds(t1)

  // The period-end job, as the scheduler runs it: a BullMQ job in this process's worker.
  statements = 0
  const rss0 = process.resourceUsage().maxRSS
  const t2 = performance.now()
  const cpuDraft0 = process.cpuUsage()
  const stopProfile = await profileTo(args.profile)
  const invoices = await platform.scheduler!.trigger('subscription-billing', { tenant_id: tenant.tenantId }, 60 * 60_000)
  const draftSeconds = seconds(t2)
  const cpuDraft = process.cpuUsage(cpuDraft0)
  await stopProfile()
  const draftStatements = statements
  const rssDraft = process.resourceUsage().maxRSS
  const batch = (await registry.getSingleMetric('meterline_billing_batch_seconds')!.get()).values
  const q = (p: number) => Number(batch.find((v) => v.labels.quantile === p)?.value ?? NaN) * 1000
  const batchCount = Number((batch as { metricName?: string; value: number }[]).find((v) => v.metricName === 'meterline_billing_batch_seconds_count')?.value ?? 0)

  // every subscription billed once: one cycle invoice per subscription that bills its own
  const [{ cycle, subs, own, advanced }] = await conn.execute(
    `SELECT (SELECT count(*) FROM invoices WHERE tenant_id = ? AND billing_reason = 'SUBSCRIPTION_CYCLE')::int AS cycle,
            (SELECT count(*) FROM subscriptions WHERE tenant_id = ?)::int AS subs,
            (SELECT count(*) FROM subscriptions WHERE tenant_id = ? AND subscription_type <> 'INHERITED')::int AS own,
            (SELECT count(*) FROM subscriptions WHERE tenant_id = ? AND current_period_start = ?)::int AS advanced`,
    [tenant.tenantId, tenant.tenantId, tenant.tenantId, tenant.tenantId, new Date(PERIOD_END)],
  )
  if (cycle !== own || advanced !== subs) throw new Error(`expected ${own} cycle invoices and ${subs} periods advanced, got ${cycle} and ${advanced}`)

  // Audit: 1 % of the invoices against the single-invoice preview (direct reads, no batch), to the cent.
  const t3 = performance.now()
  const sample = await conn.execute<{ id: string; subscription_id: string; subtotal: string; total_discount: string; total: string }[]>(
    `SELECT id, subscription_id, subtotal::text, total_discount::text, total::text FROM invoices
      WHERE tenant_id = ? AND billing_reason = 'SUBSCRIPTION_CYCLE' ORDER BY md5(id) LIMIT ?`, [tenant.tenantId, Math.max(1, Math.ceil(own / 100))],
  )
  let audited = 0
  const mismatches: string[] = []
  for (const inv of sample) {
    const em = platform.ctx.orm.em.fork()
    const s = await em.findOneOrFail(SubscriptionSchema, { id: inv.subscription_id })
    const preview = await computeSubscriptionInvoice(platform.ctx, em, s, new Date(PERIOD_START), new Date(PERIOD_END), 'SUBSCRIPTION_CYCLE', inv.id)
    const lines = await conn.execute<{ subscription_line_item_id: string; amount: string }[]>(`SELECT subscription_line_item_id, amount::text FROM invoice_line_items WHERE invoice_id = ?`, [inv.id])
    const stored = new Map(lines.map((l) => [l.subscription_line_item_id, l.amount]))
    const same = (a: string, b: string) => Number.isFinite(Number(a)) && a.replace(/\.?0+$/, '') === b.replace(/\.?0+$/, '')
    const ok = same(inv.subtotal, preview.subtotal) && same(inv.total_discount, preview.total_discount) && same(inv.total, preview.total)
      && preview.lines.every((l) => same(stored.get(l.lineItem.id) ?? 'x', l.amount)) && lines.length === preview.lines.length
    if (ok) audited++
    else mismatches.push(`${inv.id}: stored ${inv.subtotal}/${inv.total_discount}/${inv.total}, preview ${preview.subtotal}/${preview.total_discount}/${preview.total}`)
  }
  const auditSeconds = seconds(t3)

  // Variants of the drafting run on the same data, rounds interleaved (the machine is noisy).
  // per variant: invoices/s and this process's CPU ms per invoice (less sensitive to the other processes' load)
  const variantRows: [string, number[], number[]][] = []
  if (args.variants) {
    const variants = args.variants.split(',').map((v) => v.split('x').map(Number) as [number, number])
    for (const v of variants) variantRows.push([`${v[0]} x ${v[1]}`, [], []])
    for (let r = 0; r < Number(args.rounds ?? 1); r++) {
      for (const [k, [batchSize, concurrency]] of variants.entries()) {
        const cycleIds = `SELECT id FROM invoices WHERE tenant_id = ? AND billing_reason = 'SUBSCRIPTION_CYCLE'`
        await conn.execute(`DELETE FROM coupon_applications WHERE tenant_id = ? AND invoice_id IN (${cycleIds})`, [tenant.tenantId, tenant.tenantId])
        await conn.execute(`DELETE FROM system_events_outbox WHERE tenant_id = ? AND entity_id IN (${cycleIds})`, [tenant.tenantId, tenant.tenantId])
        await conn.execute(`DELETE FROM invoices WHERE tenant_id = ? AND billing_reason = 'SUBSCRIPTION_CYCLE'`, [tenant.tenantId])
        await conn.execute(`UPDATE subscriptions SET current_period_start = ?, current_period_end = ? WHERE tenant_id = ?`, [new Date(PERIOD_START), new Date(PERIOD_END), tenant.tenantId])
        await conn.execute(`VACUUM ANALYZE invoices`).catch(() => undefined)
        const tv = performance.now()
        const cpu0 = process.cpuUsage()
        const run = await runBilling(platform.ctx, { tenantId: tenant.tenantId, batchSize, concurrency })
        const sec = seconds(tv)
        const cpu = process.cpuUsage(cpu0)
        if (run.invoices !== own) throw new Error(`variant ${batchSize}x${concurrency}: ${run.invoices} invoices, expected ${own}`)
        variantRows[k][1].push(run.invoices / sec)
        variantRows[k][2].push((cpu.user + cpu.system) / 1000 / run.invoices)
        console.log(`variant ${batchSize} x ${concurrency}, round ${r + 1}: ${n(run.invoices)} invoices in ${sec.toFixed(1)} s, `
          + `${((cpu.user + cpu.system) / 1000 / run.invoices).toFixed(2)} CPU ms per invoice, ${n(run.invoices / sec)}/s`)
      }
    }
  }

  // Finalization: numbers, taxes, wallet debits (FINALIZATION_DELAY_MINUTES=0 here).
  let finalized = 0
  let finalizeSeconds = NaN
  let finalizeStatements = 0
  let finalizeCpuMs = NaN
  if (!args['skip-finalize']) {
    statements = 0
    const t4 = performance.now()
    const cpu0 = process.cpuUsage()
    finalized = await platform.scheduler!.trigger('invoice-finalization', { tenant_id: tenant.tenantId }, 60 * 60_000)
    finalizeSeconds = seconds(t4)
    const cpu = process.cpuUsage(cpu0)
    finalizeCpuMs = (cpu.user + cpu.system) / 1000
    finalizeStatements = statements
  }
  // The next month: its usage in time, and usage of the finalized month acknowledged a day before
  // the run for every 100th customer (adjustment lines on their next invoice, late-adjustments.ts).
  let nextRow = 'not run (--next-month)'
  if (args['next-month'] && !args['skip-finalize']) {
    const nextEnd = Date.UTC(new Date(PERIOD_END).getUTCFullYear(), new Date(PERIOD_END).getUTCMonth() + 1, 1)
    await generate(PERIOD_END, nextEnd, 'n')
    await generate(PERIOD_START, PERIOD_END, 'late', nextEnd - 86_400_000, 100)
    await ch.command(`OPTIMIZE TABLE ${ch.table('meter_buckets')} FINAL`)
    clockOffset = nextEnd + 60_000 - Date.now()
    statements = 0
    const stopNext = await profileTo(args['profile-next'])
    const t5 = performance.now()
    const next = await platform.scheduler!.trigger('subscription-billing', { tenant_id: tenant.tenantId }, 60 * 60_000)
    const nextSeconds = seconds(t5)
    await stopNext()
    const nextStatements = statements
    const [{ invoices: adjusted, lines: adjustments }] = await conn.execute(
      `SELECT count(DISTINCT invoice_id)::int AS invoices, count(*)::int AS lines FROM invoice_line_items WHERE tenant_id = ? AND metadata->>'adjustment_of' IS NOT NULL`, [tenant.tenantId],
    )
    const late = Math.ceil(SUBS / 100)
    nextRow = `${n(next)} invoices in ${nextSeconds.toFixed(1)} s, ${n(next / nextSeconds)}/s, ${(nextStatements / Math.max(1, next)).toFixed(2)} statements per invoice; `
      + `${n(adjusted)} invoices with ${n(adjustments)} adjustment lines (expected ${n(late)} and ${n(late * LINES)})`
    clockOffset = 0
  }
  const [{ gaps }] = await conn.execute(
    `SELECT (count(*) - (max(substring(invoice_number, 5)::int) - min(substring(invoice_number, 5)::int) + 1))::int AS gaps
       FROM invoices WHERE tenant_id = ? AND environment_id = ? AND invoice_number IS NOT NULL`, [tenant.tenantId, env],
  )

  const table: [string, string][] = [
    ['machine', '2 cores, shared with other engineers (noisy)'],
    ['subscriptions', `${n(SUBS)} (${n(own)} invoiced, ${n(SUBS - own)} inherited children), ${LINES} usage lines each (flat, slab, volume, package)`],
    ['mix', 'coupons on 10 %, taxes on 50 %, prepaid wallets on 10 %, 5 % in a hierarchy'],
    ['batch size x concurrency', `${config.billing.batchSize} x ${config.billing.runConcurrency} (one process)`],
    ['set-up (API template + SQL clones + wallets)', `${setupSeconds.toFixed(1)} s`],
    ['usage generated in ClickHouse', `${n(events)} events in ${usageSeconds.toFixed(1)} s`],
    ['drafting (subscription-billing job)', `${n(invoices)} invoices in ${draftSeconds.toFixed(1)} s`],
    ['invoices/s (drafting)', `${n(invoices / draftSeconds)}`],
    ['CPU of this process per invoice (drafting)', `${((cpuDraft.user + cpuDraft.system) / 1000 / invoices).toFixed(2)} ms`],
    ['per batch p50 / p99', `${q(0.5).toFixed(0)} / ${q(0.99).toFixed(0)} ms (${n(batchCount)} batches)`],
    ['Postgres statements per invoice (drafting)', `${(draftStatements / invoices).toFixed(2)} (${n(draftStatements)} in all)`],
    ['finalization (invoice-finalization job)', Number.isNaN(finalizeSeconds) ? 'skipped' : `${n(finalized)} invoices in ${finalizeSeconds.toFixed(1)} s, ${n(finalized / finalizeSeconds)}/s, ${(finalizeStatements / Math.max(1, finalized)).toFixed(1)} statements and ${(finalizeCpuMs / Math.max(1, finalized)).toFixed(2)} CPU ms (this process) per invoice`],
    ['invoice numbers', gaps === 0 ? 'gapless' : `${gaps} gaps`],
    ['next month (drafting; late usage for 1 % of the customers)', nextRow],
    ['peak RSS (this process: API, scheduler, chDB)', `${n(rssDraft / 1024)} MiB after drafting (${n(rss0 / 1024)} MiB before), ${n(process.resourceUsage().maxRSS / 1024)} MiB at the end`],
    ['audit: invoices equal to their single-invoice preview', `${audited} of ${sample.length} (${auditSeconds.toFixed(1)} s)`],
  ]
  const w = Math.max(...table.map((r) => r[0].length))
  console.log(`| ${'measure'.padEnd(w)} | result |\n|${'-'.repeat(w + 2)}|--------|`)
  for (const [k, v] of table) console.log(`| ${k.padEnd(w)} | ${v} |`)
  if (variantRows.length) {
    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b)
      return (s[Math.floor((s.length - 1) / 2)] + s[Math.ceil((s.length - 1) / 2)]) / 2
    }
    const first = median(variantRows[0][1])
    console.log(`\n| variant (batch x concurrency) | invoices/s per round | median | vs ${variantRows[0][0]} | CPU ms per invoice, median |\n|---|---|---|---|---|`)
    for (const [name, rates, cpu] of variantRows) console.log(`| ${name} | ${rates.map(n).join(', ')} | ${n(median(rates))} | ${(median(rates) / first).toFixed(2)} | ${median(cpu).toFixed(2)} |`)
  }
  if (mismatches.length) {
    console.error(mismatches.slice(0, 10).join('\n'))
    process.exitCode = 1
  }
} finally {
  await platform.stop()
}
