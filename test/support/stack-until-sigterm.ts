// For stop-on-test-timeout.test.ts: starts a platform the way the fault tests do, prints the pids
// of what it started, then waits, like a test that runs out of time, until a SIGTERM ends it.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createLocalStack } from './local-stack.js'

const stack = createLocalStack({ PLATFORM_TOPOLOGY: 'all-in-one' })
await stack.up()
const pid = (file: string) => Number(readFileSync(join(stack.dataDir, file), 'utf8').split('\n')[0].trim())
const pids = { platform: stack.appPid(), postgres: pid('postgres/postmaster.pid'), redis: pid('redis/redis.pid'), broker: stack.brokerPid() }
console.log(`started ${JSON.stringify(pids)}`)
setInterval(() => undefined, 1000)
