// Where the platform's memory is when its RSS peaks: each process's /proc/<pid>/smaps_rollup
// (file-backed: the node binary and libchdb.so; anonymous: heaps, arenas, stacks) and what its
// /metrics says of it (each thread's V8 heap, the embedded engine's tracked memory).
import { readFileSync } from 'node:fs'
import type { PlatformProcess } from './platform-child.js'

export interface ProcessMemory {
  name: string
  rssMiB: number
  anonymousMiB: number
  fileMiB: number
  /** thread -> V8 heap total / used (MiB) */
  heaps: Record<string, { totalMiB: number; usedMiB: number }>
  /** the embedded engine's tracked memory (MiB), where the process runs it */
  engineMiB?: number
}

const MiB = 1024 ** 2

function rollup(pid: number): { rss: number; anonymous: number } {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    const kB = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024
    return { rss: kB('Rss'), anonymous: kB('Anonymous') }
  } catch {
    return { rss: 0, anonymous: 0 }
  }
}

async function fromMetrics(port: number): Promise<Pick<ProcessMemory, 'heaps' | 'engineMiB'>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) })).text()
  const heaps: ProcessMemory['heaps'] = {}
  for (const m of text.matchAll(/^meterline_thread_heap_bytes\{([^}]*)\} (\d+)/gm)) {
    const thread = /thread="([^"]*)"/.exec(m[1])?.[1] ?? '?'
    const kind = /kind="([^"]*)"/.exec(m[1])?.[1]
    const h = (heaps[thread] ??= { totalMiB: 0, usedMiB: 0 })
    if (kind === 'total') h.totalMiB = Number(m[2]) / MiB
    if (kind === 'used') h.usedMiB = Number(m[2]) / MiB
  }
  const tracked = /^meterline_clickhouse_memory_bytes\{[^}]*part="tracked"[^}]*\} (\d+)/m.exec(text)
  return { heaps, engineMiB: tracked ? Number(tracked[1]) / MiB : undefined }
}

/** Samples every 2 s; stop() returns the sample of the highest total RSS. */
export function memoryAtPeak(processes: () => PlatformProcess[]): { stop: () => Promise<ProcessMemory[]> } {
  let best: ProcessMemory[] = []
  let bestRss = 0
  let running: Promise<void> = Promise.resolve()
  const sample = async () => {
    const ps = processes()
    const rolled = ps.map((p) => ({ p, ...rollup(p.pid) }))
    const total = rolled.reduce((s, r) => s + r.rss, 0)
    if (total <= bestRss) return
    const read = await Promise.all(rolled.map(async ({ p, rss, anonymous }) => ({
      name: p.name, rssMiB: rss / MiB, anonymousMiB: anonymous / MiB, fileMiB: (rss - anonymous) / MiB,
      ...(await fromMetrics(p.port).catch(() => ({ heaps: {} }))),
    })))
    bestRss = total
    best = read
  }
  const timer = setInterval(() => {
    running = running.then(sample).catch(() => undefined)
  }, 2000)
  return {
    stop: async () => {
      clearInterval(timer)
      await running
      return best
    },
  }
}

/** `main 380/276 MiB` per thread; `engine 28 MiB`; per process in the processes topology */
export function memoryText(sample: ProcessMemory[]): string {
  const sum = (f: (p: ProcessMemory) => number) => sample.reduce((s, p) => s + f(p), 0).toFixed(0)
  const parts = sample.map((p) => {
    const heaps = Object.entries(p.heaps).map(([t, h]) => `${t} ${h.totalMiB.toFixed(0)}/${h.usedMiB.toFixed(0)}`).join(', ')
    const engine = p.engineMiB === undefined ? '' : `; engine ${p.engineMiB.toFixed(0)}`
    return `${sample.length > 1 ? `${p.name}: ` : ''}${p.rssMiB.toFixed(0)} (file ${p.fileMiB.toFixed(0)}, anonymous ${p.anonymousMiB.toFixed(0)}; V8 heap total/used ${heaps || 'n/a'}${engine})`
  })
  return `RSS ${sum((p) => p.rssMiB)} MiB = file-backed ${sum((p) => p.fileMiB)} + anonymous ${sum((p) => p.anonymousMiB)}; ${parts.join('; ')}`
}
