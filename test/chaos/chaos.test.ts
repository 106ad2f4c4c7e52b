// A bounded chaos run (scripts/chaos/run.ts, what `npm run chaos` runs for longer) on a private
// platform started the way `npm run up` starts it, in the all-in-one topology (it restarts in a
// few seconds, so the run fits in a few minutes): its own data directory under the test's temp
// dir and its own ports, so it never touches the stack the rest of the suite uses. Seed 213's
// eight faults are one of each kind (Redis stopped, the broker restarted, npm run down/up,
// Postgres stopped, a second aggregator joining and leaving, kill -9 of the platform, a meter
// created after the events it must backfill). The processes topology's own faults (an
// aggregator process killed or paused, the endpoint killed, one joining through the admin API)
// run in test/faults/topology.test.ts, and all of them together in `npm run chaos`
// (CHAOS_TOPOLOGY=processes here: seed 1808 draws one of each of its 11 kinds first). The
// verdict is the audit's, per event id: no acknowledged event lost, none counted twice,
// usage:verify clean; nothing is timed.
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../support/private-services.js'
import { stopOnTestTimeout } from '../support/stop-on-test-timeout.js'
import { runChaos } from '../../scripts/chaos/run.js'
import { formatSummary } from '../../scripts/chaos/summary.js'
import { chaosPlatform } from '../../scripts/chaos/platform.js'

const dataDir = mkdtempSync(join(tmpdir(), 'meterline-chaos-'))
chmodSync(dataDir, 0o755) // the postgres user must reach its data directory inside
let env: NodeJS.ProcessEnv

after(async () => {
  if (env) {
    const p = chaosPlatform(env)
    await p.down()
  }
  rmSync(dataDir, { recursive: true, force: true })
})

test('chaos: a seeded fault schedule under a retrying client; every acknowledged event counted exactly once', async () => {
  env = {
    ...process.env,
    METERLINE_DATA_DIR: dataDir,
    PORT: String(await freePort()),
    PG_PORT: String(await freePort()),
    REDIS_PORT: String(await freePort()),
    KAFKA_PORT: String(await freePort()),
    CLICKHOUSE_ENDPOINT_PORT: String(await freePort()),
    PLATFORM_TOPOLOGY: process.env.CHAOS_TOPOLOGY ?? 'all-in-one',
    PG_DB_NAMES: 'meterline',
    PROMETHEUS_PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
  }
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'KAFKA_BROKERS', 'CHDB_PATH', 'SPOOL_DIR', 'REDIS_PREFIX', 'KAFKA_EVENTS_TOPIC', 'ADMIN_TOKEN']) delete env[name]
  stopOnTestTimeout(env)
  const processes = env.PLATFORM_TOPOLOGY === 'processes'
  const kinds = processes ? 11 : 8
  const seed = Number(process.env.CHAOS_SEED ?? (processes ? 1808 : 213))
  // The run ends 3 s after its last fault; the time limit only has to leave room for every kind on
  // a slow machine (a restart there takes 20-30 s, and seed 213 restarts four times).
  const summary = await runChaos({ seconds: processes ? 400 : 240, maxFaults: kinds, seed, env, pace: 0.25, rate: 150, settleMs: 3000, log: (line) => console.log(line) })
  console.log(formatSummary(summary))
  assert.deepEqual(summary.rejections, [])
  assert.deepEqual(summary.doubled, [], `doubled event ids (seed ${seed})`)
  assert.deepEqual(summary.lost, [], `lost event ids (seed ${seed})`)
  assert.deepEqual(summary.unknown, [])
  assert.equal(summary.verify.status, 0, summary.verify.output)
  assert.ok(summary.acknowledged > 0)
  assert.deepEqual(summary.faults.filter((f) => /skipped|failed/.test(f.note)), [], 'faults that did not happen')
  if (!process.env.CHAOS_SEED) assert.equal(new Set(summary.faults.map((f) => f.kind)).size, kinds, 'every kind of fault ran')
})
