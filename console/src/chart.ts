// A uPlot time-series chart of usage windows. The exact sum of what it draws is written beside
// it (and in data-sum), so a reader and the browser tests can check it against the API's total.
import { html } from 'htm/preact'
import { useEffect, useRef } from 'preact/hooks'
import type { VNode } from 'preact'
import uPlot from 'uplot'
import type { UsageSeries } from './usage-series.js'

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777']

export function UsageChart({ data, width = 1000, height = 260, bars = true }: { data: UsageSeries; width?: number; height?: number; bars?: boolean }): VNode {
  const el = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (!el.current || data.xs.length === 0) return
    const opts: uPlot.Options = {
      width,
      height,
      scales: { x: { time: true } },
      axes: [{}, { size: 70 }],
      series: [
        {},
        ...data.series.map((s, i) => ({
          label: s.label,
          stroke: COLORS[i % COLORS.length],
          fill: `${COLORS[i % COLORS.length]}33`,
          width: 2,
          paths: bars && data.series.length === 1 ? uPlot.paths.bars!({ size: [0.8, 40] }) : undefined,
          points: { show: data.xs.length < 60 },
        })),
      ],
    }
    const plot = new uPlot(opts, [data.xs, ...data.series.map((s) => s.values)] as uPlot.AlignedData, el.current)
    return () => plot.destroy()
  }, [data, width, height, bars])
  if (data.xs.length === 0) return html`<p class="muted" data-testid="chart-empty">No usage in this range.</p>`
  return html`<figure class="chart" data-testid="usage-chart" data-sum=${data.sum} data-points=${data.xs.length}>
    <div ref=${el}></div>
    <figcaption>Sum of the ${data.xs.length} windows drawn: <strong data-testid="chart-sum">${data.sum}</strong>
      ${data.series.length > 1 ? html` (${data.series.map((s) => `${s.label}: ${s.sum}`).join('; ')})` : null}</figcaption>
  </figure>`
}
