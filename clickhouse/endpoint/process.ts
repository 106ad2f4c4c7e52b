// Starts the local ClickHouse endpoint as its own process (scripts/clickhouse-endpoint.ts) and
// learns its URL from the line it prints once it listens.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface EndpointProcess {
  url: string
  child: ChildProcess
  stop(signal?: NodeJS.Signals): Promise<void>
}

export async function spawnEndpoint(env: Record<string, string | undefined>): Promise<EndpointProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/clickhouse-endpoint.ts'], {
    cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'],
  })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const m = / at (http:\/\/\S+)/.exec(out)
      if (m) {
        child.stdout!.off('data', onData)
        child.stdout!.resume()
        resolve(m[1])
      }
    }
    child.stdout!.on('data', onData)
    child.once('exit', (code) => reject(new Error(`the ClickHouse endpoint exited (${code}) before it listened: ${out}`)))
  })
  return {
    url, child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, 'exit')
      child.kill(signal)
      await exited
    },
  }
}
