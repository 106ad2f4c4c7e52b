// The operators' CLI as a separate process against a started platform: it talks to the admin
// API over HTTP (this test process holds the embedded chDB directory, as `npm run up` would).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PROJECT_ROOT } from '../../platform/config.js'
import { JOB_CATALOGUE } from '../../platform/job-catalogue.js'
import { JOBS } from '../../scheduler/jobs.js'
import { ApiClient, usePlatform } from '../../test/support/platform.js'

const TOKEN = randomBytes(24).toString('hex')
const p = usePlatform({ services: ['billing-api', 'scheduler'], config: { adminToken: TOKEN } })

interface Run { code: number | null; out: string; err: string }

/** Runs a script with node --import tsx; async, so this process keeps serving the platform meanwhile. */
function run(script: string, args: string[], env: Record<string, string | undefined>): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env }
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k]
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: PROJECT_ROOT, env: childEnv })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out, err }))
  })
}

const online = () => ({ METERLINE_API_URL: p.url, ADMIN_TOKEN: TOKEN })
const admin = (...args: string[]) => run('scripts/admin.ts', args, online())

test('jobs run follows the job until it finished and prints its progress and item count', async () => {
  const t = await p.newTenant()
  const res = await admin('jobs', 'run', 'subscription-trial-end', '--tenant', t.tenantId)
  assert.equal(res.code, 0, res.err + res.out)
  const lines = res.out.trim().split('\n')
  assert.match(lines[0], /^\[\s*\d+\.\ds\] subscription-trial-end #\d+ waiting$/)
  assert.match(lines.at(-2)!, /^\[\s*\d+\.\ds\] subscription-trial-end #\d+ completed: 0 item\(s\)$/)
  assert.equal(lines.at(-1), 'subscription-trial-end: 0 item(s)')

  const list = await admin('jobs', 'list')
  assert.equal(list.code, 0, list.err)
  assert.match(list.out, /^JOB\s+EVERY\s+NEXT RUN$/m)
  assert.match(list.out, /^subscription-trial-end\s+1 min\s+-$/m)
  assert.match(list.out, /^wallet-credit-expiry\s+15 min\s+-$/m)
})

test('a failed run exits 1 with its reason; status lists it; retry by id completes it', async () => {
  let fail = true
  JOB_CATALOGUE['test-cli-flaky'] = { everyMs: () => 60_000 }
  JOBS['test-cli-flaky'] = { everyMs: () => 60_000, run: async () => { if (fail) throw new Error('upstream timed out'); return 3 } }
  try {
    const res = await admin('jobs', 'run', 'test-cli-flaky')
    assert.equal(res.code, 1, res.err + res.out)
    const id = /test-cli-flaky #(\d+) failed: upstream timed out/.exec(res.out)?.[1]
    assert.ok(id, res.out)
    assert.match(res.out, new RegExp(`test-cli-flaky failed: upstream timed out \\(retry: npm run admin -- jobs retry ${id}\\)`))

    const status = await admin('jobs', 'status', '--queue', 'scheduler')
    assert.equal(status.code, 0, status.err)
    assert.match(status.out, /^QUEUE\s+WAITING\s+ACTIVE\s+DELAYED\s+COMPLETED\s+FAILED$/m)
    assert.match(status.out, /^scheduler\s+0\s+0\s+0\s+1\s+1$/m, status.out)
    assert.match(status.out, new RegExp(`^scheduler\\s+${id}\\s+test-cli-flaky\\s+\\S+\\s+1\\s+upstream timed out$`, 'm'))

    fail = false
    const retry = await admin('jobs', 'retry', id)
    assert.equal(retry.code, 0, retry.err)
    assert.match(retry.out, new RegExp(`^scheduler job ${id} \\(test-cli-flaky\\): (waiting|active|completed)`))
    for (let i = 0; i < 100; i++) {
      const show = await p.scheduler!.queue.getJobState(id)
      if (show === 'completed') break
      await new Promise((r) => setTimeout(r, 100))
    }
    const show = await admin('jobs', 'show', id)
    assert.equal(show.out.trim(), `scheduler job ${id} (test-cli-flaky): completed, 2 attempt(s), returned 3`)
    const after = await admin('jobs', 'status', '--queue', 'scheduler')
    assert.match(after.out, /^scheduler\s+0\s+0\s+0\s+2\s+0$/m, after.out)
    assert.match(after.out, /no failed jobs/)
  } finally {
    delete JOBS['test-cli-flaky']
    delete JOB_CATALOGUE['test-cli-flaky']
  }
})

test('npm run job:run goes through the admin API while the platform runs', async () => {
  const t = await p.newTenant()
  const res = await run('scripts/run-job.ts', ['invoice-finalization', t.tenantId], online())
  assert.equal(res.code, 0, res.err + res.out)
  assert.match(res.out, new RegExp(`the platform runs at ${p.url}: running invoice-finalization through the admin API`))
  assert.match(res.out, /^invoice-finalization: 0 item\(s\)$/m)
})

test('npm run job:run with no platform running runs the job in its own process, with progress', async () => {
  const t = await p.newTenant()
  const dataDir = mkdtempSync(join(tmpdir(), 'meterline-cli-'))
  try {
    const res = await run('scripts/run-job.ts', ['subscription-trial-end', t.tenantId], {
      METERLINE_API_URL: undefined, ADMIN_TOKEN: undefined, METERLINE_DATA_DIR: dataDir, PORT: '1', LOG_LEVEL: 'warn',
      REDIS_PREFIX: `mltest-offline-${randomBytes(3).toString('hex')}`,
    })
    assert.equal(res.code, 0, res.err + res.out)
    assert.match(res.out, /^nothing answers at http:\/\/127\.0\.0\.1:1: running subscription-trial-end in this process$/m)
    assert.match(res.out, /^\[\s*\d+\.\ds\] subscription-trial-end #\d+ completed: 0 item\(s\)$/m)
    assert.match(res.out, /^subscription-trial-end: 0 item\(s\)$/m)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test('tenant create, through the API and offline straight to Postgres, returns a working API key', async () => {
  const viaApi = await admin('tenant', 'create', 'CLI Corp')
  assert.equal(viaApi.code, 0, viaApi.err)
  const a = JSON.parse(viaApi.out)
  assert.equal((await new ApiClient(p.url, a.api_key).get(`/v1/tenants/${a.tenant_id}`)).body.name, 'CLI Corp')

  const viaScript = await run('scripts/create-tenant.ts', ['Script Corp'], online())
  assert.equal(viaScript.code, 0, viaScript.err)
  const b = JSON.parse(viaScript.out)
  assert.equal((await new ApiClient(p.url, b.api_key).get(`/v1/tenants/${b.tenant_id}`)).body.name, 'Script Corp')

  // Offline: nothing answers on PORT and no pid file in the data directory: the script writes to Postgres itself.
  const dataDir = mkdtempSync(join(tmpdir(), 'meterline-cli-'))
  try {
    const offline = await run('scripts/create-tenant.ts', ['Offline Corp', 'development'], {
      METERLINE_API_URL: undefined, ADMIN_TOKEN: undefined, METERLINE_DATA_DIR: dataDir, PORT: '1',
    })
    assert.equal(offline.code, 0, offline.err)
    const c = JSON.parse(offline.out)
    const key = new ApiClient(p.url, c.api_key)
    assert.equal((await key.get(`/v1/tenants/${c.tenant_id}`)).body.name, 'Offline Corp')
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test('a wrong token, an unknown job and bad usage fail with a message and a non-zero exit', async () => {
  const wrong = await run('scripts/admin.ts', ['jobs', 'list'], { METERLINE_API_URL: p.url, ADMIN_TOKEN: 'x'.repeat(48) })
  assert.equal(wrong.code, 1)
  assert.equal(wrong.err.trim(), 'admin API: 401 permission_denied: invalid admin token')
  const unknown = await admin('jobs', 'run', 'no-such-job')
  assert.equal(unknown.code, 1)
  assert.match(unknown.err, /404 not_found: job no-such-job not found/)
  const usage = await admin('jobs', 'frobnicate')
  assert.equal(usage.code, 2)
  assert.match(usage.err, /unknown command: jobs frobnicate\nusage: npm run admin/)
})
