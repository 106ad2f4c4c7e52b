// The bounded fuzz run of `npm test`: a fixed seed and a few requests per operation, so a
// failure reproduces exactly. `npm run fuzz` runs the same properties longer (scripts/fuzz.ts).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { usePlatform } from '../support/platform.js'
import { fuzzApi } from './fuzz-api.js'

const p = usePlatform()

test('every route: no 5xx, errors are ErrorResponses, rejected requests write nothing', async () => {
  const report = await fuzzApi(p, { seed: 1301, runsPerOperation: 4 })
  assert.ok(report.operations >= 100, `fuzzed ${report.operations} operations`)
  assert.equal(report.requests, report.operations * 4)
  assert.deepEqual(report.findings, [], `${report.findings.length} findings`)
})
