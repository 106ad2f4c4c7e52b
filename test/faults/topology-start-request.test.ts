// A change of the aggregator processes asked for while the production topology is still starting:
// billing-api serves (and so the admin API) before the aggregators have joined one after another.
// The request must wait for the start and then apply, not be lost; and the supervisor must not
// take the signal for Node's default (SIGUSR1 opens the inspector: "Debugger listening" on stderr).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { readTopology } from '../../platform/topology-file.js'
import { createLocalStack } from '../support/local-stack.js'

const stack = createLocalStack({ PLATFORM_TOPOLOGY: 'processes', TOPOLOGY_AGGREGATORS: '1', AGGREGATOR_CONSUMERS: '1' })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const aggregators = () => (readTopology(stack.dataDir) ?? []).filter((p) => p.kind === 'aggregator')

before(() => stack.up())
after(() => stack.destroy())

test('a second aggregator process asked for while the topology starts joins once the start is done', async () => {
  // the supervisor prints its banner once every role has started (the aggregator has joined)
  assert.doesNotMatch(stack.log(), /one process per role:/, 'the start had already finished: the request would not land during it')
  const token = readFileSync(join(stack.dataDir, 'admin-token'), 'utf8').trim()
  // The answer may be 200 or, when the start and the join take longer than the PUT waits, 503: either
  // way the request stands.
  const answered = fetch(`${stack.url}/v1/admin/aggregators`, {
    method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ consumers: 2 }),
  }).then(async (res) => ({ status: res.status, body: await res.text() }))
  let names: string[] = []
  for (const deadline = Date.now() + 180_000; Date.now() < deadline; await sleep(500)) {
    names = aggregators().filter((p) => p.state === 'running').map((p) => p.name)
    if (names.length === 2) break
  }
  const supervisorLines = stack.log().split('\n').filter((l) => l.startsWith('[topology]')).join('\n')
  assert.deepEqual(names.sort(), ['aggregator-1', 'aggregator-2'], supervisorLines)
  const res = await answered
  assert.ok(res.status === 200 || res.status === 503, `${res.status} ${res.body}`)
})
