// The CLI's command line (pure: tested in args.test.ts).
export type Command =
  | { kind: 'jobs-list' }
  | { kind: 'jobs-run'; name: string; tenantId?: string; wait: boolean }
  | { kind: 'jobs-status'; queue?: string; failures: number }
  | { kind: 'jobs-show'; queue: string; id: string }
  | { kind: 'jobs-retry'; queue: string; id: string }
  | { kind: 'jobs-retry-all'; queue: string }
  | { kind: 'tenant-create'; name: string; keyEnvironment: 'production' | 'development' }
  | { kind: 'aggregators-list' }
  | { kind: 'aggregators-set'; n: number }

export const USAGE = `usage: npm run admin -- <command>
  jobs list                                   the scheduler's recurring jobs
  jobs run <name> [--tenant <id>] [--no-wait] run a job now and follow it until it finished
  jobs status [--queue <q>] [--failures <n>]  jobs per state of every queue, recent failures
  jobs show <id> [--queue <q>]                one job
  jobs retry <id> [--queue <q>]               retry a failed job
  jobs retry --all [--queue <q>]              retry every failed job of a queue
  tenant create <name> [--key-environment production|development]
  aggregators list                            the aggregator consumers: partitions, shards, events written
  aggregators set <n>                         run n aggregator processes (all-in-one: consumers), 1-8
queues: scheduler (default), webhook-delivery, invoice-compute, integration-sync
env: METERLINE_API_URL (default http://127.0.0.1:$PORT), ADMIN_TOKEN (default: $METERLINE_DATA_DIR/admin-token)`

export class UsageError extends Error {}

function split(argv: string[]): { positional: string[]; flags: Map<string, string | true> } {
  const positional: string[] = []
  const flags = new Map<string, string | true>()
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (!a.startsWith('--')) {
      positional.push(a)
      continue
    }
    const [name, inline] = a.slice(2).split('=', 2)
    if (inline !== undefined) flags.set(name, inline)
    else if (['all', 'no-wait'].includes(name)) flags.set(name, true)
    else if (i + 1 < argv.length) flags.set(name, argv[++i])
    else throw new UsageError(`--${name} needs a value`)
  }
  return { positional, flags }
}

export function parseArgs(argv: string[]): Command {
  const { positional: [group, action, arg, ...rest], flags } = split(argv)
  const flag = (name: string): string | undefined => {
    const v = flags.get(name)
    return typeof v === 'string' ? v : undefined
  }
  const known = new Set(['tenant', 'no-wait', 'queue', 'failures', 'all', 'key-environment'])
  for (const f of flags.keys()) if (!known.has(f)) throw new UsageError(`unknown option --${f}`)
  if (rest.length > 0) throw new UsageError(`unexpected argument ${rest[0]}`)
  const queue = flag('queue') ?? 'scheduler'
  const need = (what: string) => {
    if (!arg) throw new UsageError(`${group} ${action} needs ${what}`)
    return arg
  }
  if (group === 'jobs') {
    switch (action) {
      case 'list': return { kind: 'jobs-list' }
      case 'run': return { kind: 'jobs-run', name: need('a job name'), tenantId: flag('tenant'), wait: !flags.has('no-wait') }
      case 'status': {
        const failures = Number(flag('failures') ?? 10)
        if (!Number.isInteger(failures) || failures < 0 || failures > 100) throw new UsageError('--failures must be an integer from 0 to 100')
        return { kind: 'jobs-status', queue: flag('queue'), failures }
      }
      case 'show': return { kind: 'jobs-show', queue, id: need('a job id') }
      case 'retry':
        if (flags.has('all')) return { kind: 'jobs-retry-all', queue }
        return { kind: 'jobs-retry', queue, id: need('a job id (or --all)') }
    }
  }
  if (group === 'tenant' && action === 'create') {
    const env = flag('key-environment') ?? 'production'
    if (env !== 'production' && env !== 'development') throw new UsageError('--key-environment must be production or development')
    return { kind: 'tenant-create', name: need('a name'), keyEnvironment: env }
  }
  if (group === 'aggregators' && action === 'list') return { kind: 'aggregators-list' }
  if (group === 'aggregators' && action === 'set') {
    const n = Number(need('a number'))
    if (!Number.isInteger(n) || n < 1 || n > 8) throw new UsageError('aggregators set needs an integer from 1 to 8')
    return { kind: 'aggregators-set', n }
  }
  throw new UsageError(group ? `unknown command: ${[group, action].filter(Boolean).join(' ')}` : 'no command')
}
