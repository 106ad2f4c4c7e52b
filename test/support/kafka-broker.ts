// A private Kafka-protocol broker (the same launcher as the local stack, scripts/kafka-mock)
// for tests that inject faults, so they never disturb other test files' broker.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../platform/config.js'

export interface PrivateBroker {
  bootstrap: string
  /** a launcher command: `down`, `up`, or `errors <api-key> <count> <error-code>` */
  control(command: string): void
  stop(): Promise<void>
}

export async function startPrivateBroker(): Promise<PrivateBroker> {
  const binary = join(loadConfig(process.env).dataDir, 'bin', 'kafka-mock')
  if (!existsSync(binary)) throw new Error(`${binary} is missing: the test command compiles it (scripts/stack.sh start)`)
  const dir = mkdtempSync(join(tmpdir(), 'meterline-broker-'))
  const bootstrapFile = join(dir, 'bootstrap')
  const fifo = join(dir, 'control')
  const child: ChildProcess = spawn(binary, [bootstrapFile, fifo, 'events:4'], { stdio: 'ignore', env: { ...process.env, KAFKA_PORT: '0' } })
  const deadline = Date.now() + 10_000
  while (!existsSync(bootstrapFile) || !existsSync(fifo)) {
    if (Date.now() > deadline) throw new Error('private broker did not start')
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    bootstrap: readFileSync(bootstrapFile, 'utf8').trim(),
    control: (command) => writeFileSync(fifo, `${command}\n`),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}
