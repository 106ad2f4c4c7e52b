// The demo tenant step of `npm run up` (scripts/all-in-one.ts --demo) meets a Postgres that is
// restarting like the rest of the start-up does: it waits for it rather than crash the process.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { MikroORM } from '@mikro-orm/postgresql'
import { migratePostgres, openOrm } from '../billing-api/database.js'
import { startPrivatePostgres, type PrivatePostgres } from '../test/support/private-services.js'
import { testConfig } from '../test/support/platform.js'
import { ensureDemoTenant } from './demo-tenant.js'

let pg: PrivatePostgres
let orm: MikroORM
const dir = mkdtempSync(join(tmpdir(), 'meterline-demo-'))
before(async () => {
  pg = await startPrivatePostgres()
  orm = await openOrm(pg.url, 2)
  await migratePostgres(orm)
})
after(async () => {
  await orm?.close(true)
  pg?.destroy()
  rmSync(dir, { recursive: true, force: true })
})

test('the demo tenant is created once Postgres is back when it was stopped at that moment', async () => {
  pg.stop()
  const logs: string[] = []
  const pending = ensureDemoTenant(orm, dir, testConfig().apiKeyHashing, (m) => logs.push(m))
  await new Promise((r) => setTimeout(r, 1500))
  pg.start()
  const demo = await pending
  assert.match(demo.apiKey, /\S{20,}/)
  assert.equal(existsSync(join(dir, 'demo.json')), true)
  assert.ok(logs.some((m) => m.includes('Postgres')), 'the wait is logged')
  const again = await ensureDemoTenant(orm, dir, testConfig().apiKeyHashing)
  assert.equal(again.tenantId, demo.tenantId, 'kept across restarts')
})
