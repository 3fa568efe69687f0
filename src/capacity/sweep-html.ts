import { type ChartSeries, chartPage, escapeHtml as esc, PALETTE, svgChart } from '../report/svg-chart.ts'
import type { Percentiles, SweepResult } from './results.ts'

const n = (v: number | null | undefined, digits = 1): string =>
  v === null || v === undefined ? '—' : Number(v.toFixed(digits)).toString()

/** sweep.html: latency percentiles, throughput and goodput against offered load; the per-user Pareto front. */
export function sweepHtml(r: SweepResult, title: string): string {
  const mode = r.points[0]?.mode ?? 'rate'
  const xLabel = mode === 'rate' ? 'offered load (req/s)' : 'concurrency (requests in flight)'
  const latency = (key: 'ttft' | 'tpot' | 'e2e', what: string): string => {
    const series: ChartSeries[] = (['p50', 'p90', 'p99'] as const).map((p, k) => ({
      name: `${what} ${p}`,
      color: PALETTE[k] as string,
      points: r.points.map((pt) => ({ x: pt.offered, y: (pt[key] as Percentiles)[p], hollow: pt.invalid !== null })),
    }))
    return svgChart({ title: `${what} against offered load`, xLabel, yLabel: `${what} (ms)`, series })
  }
  const throughput = svgChart({
    title: 'Throughput and goodput against offered load',
    xLabel,
    yLabel: 'per second',
    series: [
      {
        name: 'output tok/s',
        color: PALETTE[0] as string,
        points: r.points.map((p) => ({ x: p.offered, y: p.outputTokenThroughput })),
      },
      {
        name: 'completed req/s',
        color: PALETTE[1] as string,
        points: r.points.map((p) => ({ x: p.offered, y: p.requestThroughput })),
      },
      ...(r.points.some((p) => p.goodput !== null)
        ? [
            {
              name: 'goodput req/s',
              color: PALETTE[2] as string,
              points: r.points.map((p) => ({ x: p.offered, y: p.goodput?.perSecond ?? null })),
            },
          ]
        : []),
    ],
  })
  const pareto = svgChart({
    title: 'Output tokens/s per user against in total (the Pareto front)',
    xLabel: 'output tok/s per user (1000 / median TPOT)',
    yLabel: 'output tok/s in total',
    series: [
      {
        name: mode === 'rate' ? 'each offered rate' : 'each concurrency',
        color: PALETTE[3] as string,
        points: r.points.map((p) => ({
          x: p.outputTokensPerUser ?? 0,
          y: p.outputTokenThroughput,
          label: `${n(p.offered, 2)}: ${n(p.outputTokensPerUser)} tok/s per user, ${n(p.outputTokenThroughput)} in total`,
        })),
      },
    ],
  })
  const header = [
    mode === 'rate' ? 'req/s' : 'concurrency',
    'requests',
    'success',
    'ttft p50',
    'ttft p99',
    'tpot p50',
    'tpot p99',
    'e2e p99',
    'completed req/s',
    'output tok/s',
    'tok/s per user',
    'goodput',
    'note',
    '',
  ]
  const rows = r.points.map((p) => [
    n(p.offered, 3),
    String(p.requests),
    `${n(p.successRate * 100)} %`,
    n(p.ttft.p50),
    n(p.ttft.p99),
    n(p.tpot.p50),
    n(p.tpot.p99),
    n(p.e2e.p99),
    n(p.requestThroughput, 2),
    n(p.outputTokenThroughput),
    n(p.outputTokensPerUser),
    p.goodput === null ? '—' : `${n(p.goodput.fraction * 100)} % (${n(p.goodput.perSecond, 2)}/s)`,
    esc(p.invalid === null ? '' : `invalid: ${p.invalid}`),
    `<a href="${esc(encodeURI(`${p.dir.split('/').at(-1)}/report.html`))}">report</a>`,
  ])
  const table = `<table><thead><tr>${header.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${rows
    .map((c) => `<tr>${c.map((x) => `<td>${x}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`
  const ttftNote =
    r.points[0]?.ttftSource === 'client_ttft'
      ? " TTFT is the client's (client_ttft): the server reported no timestamps."
      : ''
  const intro = `<p>${r.points.length} points, one full run each (its folder, CSV and report are linked below). Times in ms;
${mode === 'rate' ? "latencies from each request's arrival" : "latencies from each request's send (the wait for a slot is not latency in a closed loop)"}.${ttftNote}
A hollow point is an invalid run.</p>`
  return chartPage(
    title,
    intro,
    [
      latency('ttft', 'TTFT'),
      latency('tpot', 'TPOT'),
      latency('e2e', 'end-to-end latency'),
      throughput,
      pareto,
      table,
    ].join('\n'),
  )
}
