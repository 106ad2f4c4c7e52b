// Where the operators' CLI finds the platform, and whether one is running there. The CLI talks
// HTTP only; it never opens the embedded chDB data directory a running platform holds.
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { PROJECT_ROOT } from '../../platform/config.js'

export interface AdminTarget {
  url: string
  token?: string
  /** METERLINE_API_URL was set: always talk to it, never fall back to running things in-process */
  explicit: boolean
  dataDir: string
}

type Env = Record<string, string | undefined>

export function adminTarget(env: Env = process.env): AdminTarget {
  const dataDir = resolve(env.METERLINE_DATA_DIR || join(PROJECT_ROOT, '.data'))
  const explicit = Boolean(env.METERLINE_API_URL)
  const url = (env.METERLINE_API_URL || `http://127.0.0.1:${env.PORT || '8080'}`).replace(/\/+$/, '')
  // `npm run up` generates the local platform's token into the data directory.
  const tokenFile = join(dataDir, 'admin-token')
  const token = env.ADMIN_TOKEN || (existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : undefined)
  return { url, token: token || undefined, explicit, dataDir }
}

function pidAlive(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim())
    process.kill(pid, 0)
    return pid
  } catch {
    return undefined
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1500) })
    return res.status < 500
  } catch {
    return false
  }
}

export type PlatformState = { running: true } | { running: false; why: string }

/**
 * Running: METERLINE_API_URL is set, or the local all-in-one process (scripts/up.sh's pid file)
 * is alive, or something answers /health at the default URL. A pid alive whose API does not
 * answer (still starting, another port) is an error, not "offline": running in-process then
 * would collide with its chDB directory.
 */
export async function platformState(target: AdminTarget): Promise<PlatformState> {
  if (target.explicit) return { running: true }
  if (await answers(target.url)) return { running: true }
  const pid = pidAlive(join(target.dataDir, 'platform.pid'))
  if (pid) throw new Error(`the platform runs (pid ${pid}) but ${target.url} does not answer; wait for it to start, or set METERLINE_API_URL`)
  return { running: false, why: `nothing answers at ${target.url}` }
}
