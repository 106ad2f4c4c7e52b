// A test file that runs past --test-timeout is ended by the runner with SIGTERM: its after()
// hooks never run, so a platform it started with scripts/up.sh (and that platform's Postgres,
// Redis and broker) would live on and slow every file after it. Registered stacks are stopped
// with `npm run down` before the file exits.
import { spawnSync } from 'node:child_process'
import { PROJECT_ROOT } from '../../platform/config.js'

const running = new Set<NodeJS.ProcessEnv>()
let installed = false

function stopAll(): void {
  for (const env of running) {
    console.error(`[test] SIGTERM (the file ran out of time?): npm run down for ${env.METERLINE_DATA_DIR}`)
    spawnSync('bash', ['scripts/down.sh'], { cwd: PROJECT_ROOT, env, stdio: 'ignore', timeout: 120_000 })
  }
  process.exit(143)
}

/** Stops the platform of `env` (its METERLINE_DATA_DIR) if this process gets SIGTERM; the returned function unregisters it. */
export function stopOnTestTimeout(env: NodeJS.ProcessEnv): () => void {
  if (!installed) process.once('SIGTERM', stopAll)
  installed = true
  running.add(env)
  return () => running.delete(env)
}
