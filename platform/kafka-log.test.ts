import { test } from 'node:test'
import assert from 'node:assert/strict'
import { logLevel } from 'kafkajs'
import { kafkaLogCreator, reportRequestTimeout } from './kafka.js'
import { kafkaRequestTimeouts } from './metrics.js'

test("kafkajs' errors stay errors, but a request refused while the group rebalances is logged as a warning", (t) => {
  const lines: [string, string][] = []
  t.mock.method(console, 'error', (line: string) => lines.push(['error', line]))
  t.mock.method(console, 'warn', (line: string) => lines.push(['warn', line]))
  const log = kafkaLogCreator(logLevel.ERROR)
  const at = { timestamp: '2026-11-29T00:00:00.000Z', logger: 'kafkajs' }
  log({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { ...at, message: 'Response OffsetCommit(key: 8, version: 5)', error: 'The group is rebalancing, so a rejoin is needed' } })
  log({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { ...at, message: 'Connection error', error: 'connect ECONNREFUSED 127.0.0.1:9092' } })
  assert.deepEqual(lines.map(([to, line]) => [to, (JSON.parse(line) as { level: string }).level]), [['warn', 'WARN'], ['error', 'ERROR']])
  assert.equal((JSON.parse(lines[0][1]) as { message: string }).message, '[Connection] Response OffsetCommit(key: 8, version: 5)')
})

test('a Kafka request with no answer within its timeout is a warning and a count', async (t) => {
  const lines: string[] = []
  t.mock.method(console, 'warn', (line: string) => lines.push(line))
  const count = async () => (await kafkaRequestTimeouts.get()).values.find((v) => v.labels.api === 'Fetch' && v.labels.client === 'consumer')?.value ?? 0
  const before = await count()
  reportRequestTimeout('consumer', { apiName: 'Fetch', broker: '127.0.0.1:9092', clientId: 'meterline-aggregator', sentAt: Date.now() - 30_000, pendingDuration: 0 })
  assert.equal(await count(), before + 1)
  const line = JSON.parse(lines[0]) as { level: string; message: string }
  assert.equal(line.level, 'WARN')
  assert.match(line.message, /^Fetch request to 127\.0\.0\.1:9092 got no answer for 300\d\d ms/)
})
