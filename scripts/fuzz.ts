// `npm run fuzz`: the API fuzz properties of test/fuzz/fuzz-api.ts, long. FUZZ_RUNS requests per
// operation (default 200), FUZZ_SEED (default: random, printed so a finding reproduces).
// Prints every finding and a summary; exits 1 when anything was found.
import { startTestPlatform } from '../test/support/platform.js'
import { fuzzApi } from '../test/fuzz/fuzz-api.js'

const runs = Number(process.env.FUZZ_RUNS ?? 200)
const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31))
if (!Number.isInteger(runs) || runs < 1) throw new Error(`FUZZ_RUNS must be a positive integer, got "${process.env.FUZZ_RUNS}"`)
console.log(`fuzzing every operation with ${runs} requests each, seed ${seed}`)
const started = Date.now()
const p = await startTestPlatform()
try {
  const report = await fuzzApi(p, { seed, runsPerOperation: runs, log: (line) => console.log(line) })
  console.log(JSON.stringify({ ...report, findings: report.findings.length, seconds: Math.round((Date.now() - started) / 1000) }, null, 2))
  process.exitCode = report.findings.length ? 1 : 0
} finally {
  await p.stop()
}
