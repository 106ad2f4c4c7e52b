// A uPlot time-series chart of usage windows. The exact sum of what it draws is written beside
// it (and in data-sum), so a reader and the browser tests can check it against the API's total.
import { html } from 'htm/preact'
import { useEffect, useRef } from 'preact/hooks'
import type { VNode } from 'preact'
import uPlot from 'uplot'
import type { UsageSeries } from './usage-series.js'

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777']

const WINDOW_SECONDS = { MINUTE: 60, HOUR: 3600, DAY: 86_400 }

/** Every window of the range (so a bar is one window wide), empty ones null; the drawn windows alone past 5000. */
function alignedData(data: UsageSeries, step: number, range?: [number, number]): uPlot.AlignedData {
  const count = range ? Math.ceil((range[1] - range[0]) / 1000 / step) : 0
  if (!range || count > 5000) return [data.xs, ...data.series.map((s) => s.values)]
  const first = Math.floor(range[0] / 1000 / step) * step
  const xs = Array.from({ length: count }, (_, i) => first + i * step)
  const at = new Map(data.xs.map((x, i) => [x, i]))
  return [xs, ...data.series.map((s) => xs.map((x) => (at.has(x) ? s.values[at.get(x)!] : null)))]
}

/**
 * `window`: the windows' size, so each bar stands over its whole window (x = its middle);
 * `range`: the requested [start, end) in epoch ms, so the axis shows the range, not only the windows with usage.
 */
export function UsageChart({ data, window, range, height = 260 }: {
  data: UsageSeries
  window: keyof typeof WINDOW_SECONDS
  range?: [number, number]
  height?: number
}): VNode {
  const el = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (!el.current || data.xs.length === 0) return
    const half = WINDOW_SECONDS[window] / 2
    const bars = data.series.length === 1
    const opts: uPlot.Options = {
      width: Math.max(600, el.current.clientWidth),
      // Windows are UTC days and hours, like every date in the console.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      height,
      scales: {
        x: { time: true, ...(range ? { range: [range[0] / 1000, range[1] / 1000] as [number, number] } : {}) },
        // Usage starts at zero, so bar heights compare.
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [{}, { size: 70 }],
      series: [
        {},
        ...data.series.map((s, i) => ({
          label: s.label,
          stroke: COLORS[i % COLORS.length],
          fill: `${COLORS[i % COLORS.length]}33`,
          width: 2,
          paths: bars ? uPlot.paths.bars!({ size: [0.9, Infinity] }) : undefined,
          points: { show: !bars && data.xs.length < 200 },
        })),
      ],
    }
    // Several groups are drawn as lines through the windows that have usage.
    const [xs, ...ys] = alignedData(data, WINDOW_SECONDS[window], bars ? range : undefined)
    const plot = new uPlot(opts, [(xs as number[]).map((x) => x + half), ...ys], el.current)
    return () => plot.destroy()
  }, [data, window, range?.[0], range?.[1], height])
  if (data.xs.length === 0) return html`<p class="muted" data-testid="chart-empty">No usage in this range.</p>`
  return html`<figure class="chart" data-testid="usage-chart" data-sum=${data.sum} data-points=${data.xs.length}>
    <div ref=${el}></div>
    <figcaption>Sum of the ${data.xs.length} windows drawn: <strong data-testid="chart-sum">${data.sum}</strong>
      ${data.series.length > 1 ? html` (${data.series.map((s) => `${s.label}: ${s.sum}`).join('; ')})` : null}</figcaption>
  </figure>`
}
