import { test } from 'node:test'
import assert from 'node:assert/strict'
import { logLevel } from 'kafkajs'
import { kafkaLogCreator } from './kafka.js'

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
