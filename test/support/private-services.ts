// A private Postgres and a private Redis for the fault tests (test/faults/): real servers from
// the same Debian packages as the local stack, on free loopback ports, data in a temporary
// directory. A test stops and restarts them (pg_ctl, redis-cli shutdown) without disturbing the
// shared stack other test files use.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port
      srv.close(() => resolve(port))
    })
  })
}

function pgBin(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b))
  const bin = `/usr/lib/postgresql/${versions[versions.length - 1]}/bin`
  if (!existsSync(join(bin, 'pg_ctl'))) throw new Error(`no pg_ctl in ${bin}: run the test command (scripts/stack.sh installs Postgres)`)
  return bin
}

/** initdb and pg_ctl refuse to run as root: run them as the postgres user then. */
function asPostgres(cmd: string, args: string[]): string {
  const isRoot = process.getuid?.() === 0
  return execFileSync(isRoot ? 'runuser' : cmd, isRoot ? ['-u', 'postgres', '--', cmd, ...args] : args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

export interface PrivatePostgres {
  /** postgres://meterline:meterline@127.0.0.1:<port>/meterline */
  url: string
  port: number
  stop(): void
  start(): void
  /** SIGSTOP to the postmaster and every backend: connections are accepted, nothing is answered */
  freeze(): void
  /** SIGCONT to them all */
  thaw(): void
  destroy(): void
}

function postmasterPid(data: string): number {
  return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
}

function childPids(parent: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(parent)], { encoding: 'utf8' }).split('\n').map((l) => Number(l.trim())).filter((n) => n > 0)
  } catch {
    return [] // ps exits 1 when there are none
  }
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = pgBin()
  // Under /var/tmp: the postgres user must be able to reach the directory.
  const dir = mkdtempSync('/var/tmp/meterline-faults-pg-')
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
    chownSync(dir, uid, gid)
  }
  chmodSync(dir, 0o700)
  const data = join(dir, 'data')
  asPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale'])
  const port = await freePort()
  const pg = {
    url: `postgres://meterline:meterline@127.0.0.1:${port}/meterline`,
    port,
    start() {
      const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off`
      asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'postgres.log'), '-o', opts, '-w', '-t', '30', 'start'])
    },
    stop() {
      asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop'])
    },
    freeze() {
      const postmaster = postmasterPid(data)
      process.kill(postmaster, 'SIGSTOP') // first: no new backend is forked after the list below
      for (const pid of childPids(postmaster)) process.kill(pid, 'SIGSTOP')
    },
    thaw() {
      const postmaster = postmasterPid(data)
      for (const pid of childPids(postmaster)) process.kill(pid, 'SIGCONT')
      process.kill(postmaster, 'SIGCONT')
    },
    destroy() {
      try {
        pg.thaw()
      } catch {
        // not running: nothing to wake
      }
      try {
        pg.stop()
      } catch {
        // already stopped: nothing to stop before removing the directory
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
  pg.start()
  const psql = (sql: string) => execFileSync('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', sql])
  psql(`CREATE ROLE meterline LOGIN PASSWORD 'meterline'`)
  psql('CREATE DATABASE meterline OWNER meterline')
  return pg
}

export interface PrivateRedis {
  url: string
  port: number
  /** `redis-cli shutdown nosave`, as an operator (or a crash) would take it away */
  stop(): Promise<void>
  start(): Promise<void>
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort()
  const dir = mkdtempSync('/var/tmp/meterline-faults-redis-')
  let child: ChildProcess | undefined
  const ping = () => {
    try {
      return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { encoding: 'utf8' }).trim() === 'PONG'
    } catch {
      return false
    }
  }
  const redis: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'], { stdio: 'ignore' })
      for (let i = 0; i < 100 && !ping(); i++) await new Promise((r) => setTimeout(r, 50))
      if (!ping()) throw new Error(`private redis did not start on ${port}`)
    },
    async stop() {
      const exited = child && child.exitCode === null ? new Promise((r) => child!.once('exit', r)) : Promise.resolve()
      try {
        execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'shutdown', 'nosave'], { stdio: 'ignore' })
      } catch {
        // redis-cli reports the connection closing under it as an error: the server is gone
      }
      await exited
    },
  }
  await redis.start()
  return redis
}
