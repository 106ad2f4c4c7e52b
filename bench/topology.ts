// The two local topologies side by side: bench/steady.ts run in turn on the all-in-one process
// (engine in-process) and on the processes topology (every role its own process, ClickHouse over
// HTTP through the local endpoint), A/B/A/B, with the load average before each run. Prints every
// run, then the medians per topology and their ratio.
//
//   npm run bench:topology -- [--rate 20000] [--seconds 600] [--rounds 2] [--readers 2]
import { spawn } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '600' },
    rounds: { type: 'string', default: '2' },
    readers: { type: 'string', default: '2' },
  },
})

interface Run {
  topology: string
  loadBefore: number
  acceptedPerSecond: number
  refused: number
  freshness: { p50: number; p99: number; max: number }
  reads: { p50: number; p99: number; n: number }
  lagMax: number
  drainedMs: number
  cpuPerEventUs: number
  rssMaxMiB: number
  perProcess: Record<string, { cpuSeconds: number; rssMaxMiB: number }>
  exact: boolean
}

async function steady(topology: string): Promise<Run> {
  const json = join(os.tmpdir(), `bench-topology-${process.pid}-${topology}.json`)
  rmSync(json, { force: true })
  const loadBefore = os.loadavg()[0]
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/steady.ts', '--topology', topology, '--rate', args.rate!, '--seconds', args.seconds!, '--readers', args.readers!, '--json', json], { stdio: 'inherit' })
  const code = await new Promise<number | null>((r) => child.once('exit', r))
  if (code !== 0) throw new Error(`bench:steady --topology ${topology} exited ${code}`)
  return { ...(JSON.parse(readFileSync(json, 'utf8')) as Omit<Run, 'loadBefore'>), topology, loadBefore }
}

const runs: Run[] = []
for (let r = 0; r < Number(args.rounds); r++) {
  for (const topology of ['all-in-one', 'processes']) runs.push(await steady(topology))
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const figures: [string, (r: Run) => number, number][] = [
  ['accepted events/s', (r) => r.acceptedPerSecond, 0],
  ['freshness p50 (ms)', (r) => r.freshness.p50, 0],
  ['freshness p99 (ms)', (r) => r.freshness.p99, 0],
  ['usage read p50 (ms)', (r) => r.reads.p50, 1],
  ['usage read p99 (ms)', (r) => r.reads.p99, 1],
  ['consumer lag max (records)', (r) => r.lagMax, 0],
  ['drain after load (ms)', (r) => r.drainedMs, 0],
  ['CPU per event (us)', (r) => r.cpuPerEventUs, 0],
  ['RSS max, all processes (MiB)', (r) => r.rssMaxMiB, 0],
]
console.log(`\nbench:topology ${new Date().toISOString()}: ${args.rate} events/s for ${args.seconds} s, ${args.rounds} rounds A/B, ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}`)
console.log('\nrun  topology     load before  accepted/s  fresh p50/p99 ms  read p50/p99 ms  exact')
runs.forEach((r, i) => console.log(`${String(i + 1).padEnd(4)} ${r.topology.padEnd(12)} ${r.loadBefore.toFixed(1).padStart(11)}  ${r.acceptedPerSecond.toFixed(0).padStart(10)}  ${`${r.freshness.p50}/${r.freshness.p99}`.padStart(16)}  ${`${r.reads.p50.toFixed(1)}/${r.reads.p99.toFixed(1)}`.padStart(15)}  ${r.exact ? 'yes' : 'NO'}`))
const of = (t: string) => runs.filter((r) => r.topology === t)
console.log('\nmedian                        all-in-one   processes   processes / all-in-one')
for (const [name, f, digits] of figures) {
  const a = median(of('all-in-one').map(f))
  const b = median(of('processes').map(f))
  console.log(`${name.padEnd(29)} ${a.toFixed(digits).padStart(10)}  ${b.toFixed(digits).padStart(10)}   ${(b / a).toFixed(2)}`)
}
const last = of('processes').at(-1)
if (last) {
  console.log('\nprocesses topology, last run, per process: CPU s during the load / RSS max')
  for (const [name, p] of Object.entries(last.perProcess)) console.log(`  ${name.padEnd(20)} ${p.cpuSeconds.toFixed(1).padStart(7)} s  ${p.rssMaxMiB.toFixed(0).padStart(6)} MiB`)
}
console.log(`\nexact in every run: ${runs.every((r) => r.exact) ? 'yes' : 'NO'}`)
