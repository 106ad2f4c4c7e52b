// The record of a billing run an operator reads (admin API, `npm run admin -- jobs run
// subscription-billing`): done / total, rate, ETA and failures. One row per run id (the BullMQ
// job, so a stalled or retried job continues its row). Counters are moved by each batch's own
// transaction: what the row says was committed, whatever crashed.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { MikroORM } from '@mikro-orm/postgresql'

export interface BillingRun {
  id: string
  job_name: string
  tenant_id: string | null
  state: 'running' | 'completed' | 'failed'
  attempts: number
  started_at: Date
  updated_at: Date
  finished_at: Date | null
  total: number
  subscriptions: number
  invoices: number
  conflicts: number
  batches: number
  failures: number
  watermark: Date | null
}

export type BillingRunView = Omit<BillingRun, 'started_at' | 'updated_at' | 'finished_at' | 'watermark'> & {
  started_at: string
  updated_at: string
  finished_at: string | null
  watermark: string | null
  /** subscriptions per second since the run started */
  rate: number
  /** seconds left at that rate; null when unknown */
  eta_seconds: number | null
  recent_failures: { subscription_id: string; error: string }[]
}

const SELECT = `SELECT r.*, (SELECT count(*) FROM billing_run_failures f WHERE f.run_id = r.id)::int AS failures FROM billing_runs r`

/** Starts (or, for a retried job, resumes) a run; `total` is re-estimated at every attempt. */
export async function openBillingRun(orm: MikroORM, id: string, jobName: string, tenantId: string | null, total: number, watermark: Date | null): Promise<void> {
  await orm.em.getConnection().execute(
    `INSERT INTO billing_runs (id, job_name, tenant_id, total, watermark) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET attempts = billing_runs.attempts + 1, state = 'running', finished_at = NULL, updated_at = now(),
       total = billing_runs.subscriptions + EXCLUDED.total, watermark = EXCLUDED.watermark`,
    [id, jobName, tenantId, total, watermark],
  )
}

/** In the batch's transaction: what the batch committed. */
export async function countBatch(tx: EntityManager, id: string, d: { subscriptions: number; invoices: number; conflicts: number }): Promise<void> {
  await tx.getConnection().execute(
    `UPDATE billing_runs SET subscriptions = subscriptions + ?, invoices = invoices + ?, conflicts = conflicts + ?, batches = batches + 1,
       total = greatest(total, subscriptions + ?), updated_at = now() WHERE id = ?`,
    [d.subscriptions, d.invoices, d.conflicts, d.subscriptions, id], 'run', tx.getTransactionContext(),
  )
}

/** In the batch's transaction: subscriptions skipped for the rest of the run. */
export async function recordFailures(tx: EntityManager, id: string, failures: { subscription_id: string; error: string }[]): Promise<void> {
  if (failures.length === 0) return
  await tx.getConnection().execute(
    `INSERT INTO billing_run_failures (run_id, subscription_id, error) SELECT ?, f.subscription_id, f.error
       FROM json_to_recordset(?::json) AS f(subscription_id text, error text) ON CONFLICT DO NOTHING`,
    [id, JSON.stringify(failures)], 'run', tx.getTransactionContext(),
  )
}

export async function closeBillingRun(orm: MikroORM, id: string, state: 'completed' | 'failed'): Promise<BillingRun> {
  await orm.em.getConnection().execute(`UPDATE billing_runs SET state = ?, finished_at = now(), updated_at = now() WHERE id = ?`, [state, id])
  return (await readBillingRun(orm.em.fork(), id))!
}

/**
 * One run by its id (`<job name>:<job id>:<job created ms>`), or by `<job name>:<job id>` alone:
 * the newest run of that job id (ids repeat after Redis is emptied; the creation time tells them apart).
 */
export async function readBillingRun(em: EntityManager, id: string): Promise<BillingRun | null> {
  const conn = em.getConnection()
  const [row] = await conn.execute<BillingRun[]>(`${SELECT} WHERE r.id = ?`, [id])
  if (row) return normalize(row)
  if (id.split(':').length !== 2) return null
  const [newest] = await conn.execute<BillingRun[]>(
    `${SELECT} WHERE r.id LIKE ? ESCAPE '!' ORDER BY r.started_at DESC LIMIT 1`, [`${id.replace(/[!%_]/g, (c) => `!${c}`)}:%`],
  )
  return newest ? normalize(newest) : null
}

export async function listBillingRuns(em: EntityManager, limit: number): Promise<BillingRun[]> {
  return (await em.getConnection().execute<BillingRun[]>(`${SELECT} ORDER BY r.started_at DESC LIMIT ?`, [limit])).map(normalize)
}

function normalize(r: BillingRun): BillingRun {
  const date = (d: Date | string | null) => (d === null ? null : new Date(d))
  return { ...r, started_at: date(r.started_at)!, updated_at: date(r.updated_at)!, finished_at: date(r.finished_at), watermark: date(r.watermark) }
}

/** The operator's view: figures plus rate and ETA, and the latest failures. */
export async function billingRunView(em: EntityManager, run: BillingRun, now = new Date()): Promise<BillingRunView> {
  const failures = await em.getConnection().execute<{ subscription_id: string; error: string }[]>(
    'SELECT subscription_id, error FROM billing_run_failures WHERE run_id = ? ORDER BY failed_at DESC LIMIT 5', [run.id],
  )
  const seconds = Math.max(0.001, ((run.finished_at ?? now).getTime() - run.started_at.getTime()) / 1000)
  const rate = run.subscriptions / seconds
  const left = Math.max(0, run.total - run.subscriptions)
  return {
    ...run, started_at: run.started_at.toISOString(), updated_at: run.updated_at.toISOString(),
    finished_at: run.finished_at?.toISOString() ?? null, watermark: run.watermark?.toISOString() ?? null,
    rate: Math.round(rate * 10) / 10, eta_seconds: run.state !== 'running' ? 0 : rate > 0 ? Math.round(left / rate) : null,
    recent_failures: failures,
  }
}
