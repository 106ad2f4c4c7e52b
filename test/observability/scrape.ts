// Reads the Prometheus text exposition format: enough of it for tests and the dashboard check.

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

export function parseExposition(text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = LINE.exec(line)
    if (!m) continue
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    out.push({ name: m[1], labels, value: Number(m[3]) })
  }
  return out
}

/** Sum of the samples of `name` whose labels include `match`. */
export function total(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0)
}

/** Declared metric families (# TYPE lines), also those without a sample yet. */
export function declaredMetrics(text: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1], m[2])
  return out
}

export async function scrapeText(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/metrics`)
  if (!res.ok) throw new Error(`/metrics answered ${res.status}`)
  return res.text()
}

export async function scrape(baseUrl: string): Promise<Sample[]> {
  return parseExposition(await scrapeText(baseUrl))
}
