// The local broker (scripts/stack.sh, librdkafka's mock cluster) is started again when it dies:
// it has aborted under long rebalancing runs, and nothing brought it back (docs/architecture.md,
// "The local broker can abort"). Its own data directory and port, so the shared stack is untouched.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Kafka, logLevel } from 'kafkajs'
import { PROJECT_ROOT } from '../../platform/config.js'
import { freePort } from '../support/private-services.js'
import { processAlive } from '../../platform/process-alive.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** One message produced to `events` and the topic's offsets read back: the broker serves. */
async function roundTrip(bootstrap: string): Promise<number> {
  const kafka = new Kafka({ clientId: 'broker-keeper-test', brokers: [bootstrap], logLevel: logLevel.NOTHING })
  const producer = kafka.producer()
  const admin = kafka.admin()
  try {
    await producer.connect()
    await producer.send({ topic: 'events', messages: [{ key: 'k', value: 'v' }] })
    await admin.connect()
    const offsets = await admin.fetchTopicOffsets('events')
    return offsets.reduce((sum, o) => sum + Number(o.high), 0)
  } finally {
    await producer.disconnect()
    await admin.disconnect()
  }
}

test('the local broker is started again on the same address when it aborts; stop ends it and its keeper', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meterline-keeper-'))
  chmodSync(dataDir, 0o755)
  const env = { ...process.env, METERLINE_DATA_DIR: dataDir, KAFKA_PORT: String(await freePort()) }
  const stack = (command: string) => spawnSync('bash', ['scripts/stack.sh', command], { cwd: PROJECT_ROOT, env, encoding: 'utf8', timeout: 120_000 })
  const read = (file: string) => readFileSync(join(dataDir, 'kafka', file), 'utf8').trim()
  try {
    const started = stack('start-kafka')
    assert.equal(started.status, 0, started.stderr)
    const bootstrap = read('bootstrap')
    const first = Number(read('kafka-mock.pid'))
    assert.equal(await roundTrip(bootstrap), 1)

    process.kill(first, 'SIGABRT') // what librdkafka's failed assertion does
    let second = first
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(100)) {
      try {
        second = Number(read('kafka-mock.pid'))
        if (second !== first && processAlive(second) && read('bootstrap') !== '') break
      } catch {
        // between two brokers: no pid or no bootstrap file yet
      }
    }
    assert.notEqual(second, first, 'no new broker')
    assert.equal(read('bootstrap'), bootstrap, 'the same address')
    assert.equal(await roundTrip(bootstrap), 1, 'a new broker serves, empty')
    assert.match(read('kafka-mock.log'), new RegExp(`the broker \\(pid ${first}\\) exited with status 134; starting it again`))
    assert.match(stack('status').stdout, /kafka: running/)

    const keeper = Number(read('kafka-keeper.pid'))
    assert.equal(stack('stop-kafka').status, 0)
    await sleep(500)
    assert.deepEqual([processAlive(keeper), processAlive(second)], [false, false], 'the keeper and the broker stopped')
  } finally {
    stack('stop-kafka')
    rmSync(dataDir, { recursive: true, force: true })
  }
})
