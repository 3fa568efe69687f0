import { type ChartSeries, chartPage, escapeHtml as esc, PALETTE, svgChart } from '../report/svg-chart.ts'
import { normalizeSpec, type Objective, type SloSpec } from '../slo/slo-spec.ts'
import { verdictText } from '../summarise/verdict.ts'
import type { Percentiles, SweepPoint, SweepResult } from './results.ts'

/** The columns each latency chart draws, by the SLO fields that limit them. */
const CHART_FIELDS: Record<'ttft' | 'tpot' | 'e2e', readonly string[]> = {
  ttft: ['ttft', 'client_ttft'],
  tpot: ['tpot'],
  e2e: ['total_latency'],
}

/** A point kept up when it completed at least this fraction of its offered rate. */
const KEPT_UP = 0.95

const keptUp = (p: SweepPoint): boolean => p.keptUp !== false

const n = (v: number | null | undefined, digits = 1): string =>
  v === null || v === undefined ? '—' : Number(v.toFixed(digits)).toString()

/** sweep.html: latency percentiles, throughput and goodput against offered load; the per-user Pareto front. */
export function sweepHtml(r: SweepResult, title: string, slo?: unknown): string {
  const mode = r.points[0]?.mode ?? 'rate'
  let objectives: Objective[] = []
  try {
    objectives = slo === undefined || slo === null ? [] : normalizeSpec(slo as SloSpec)
  } catch {
    objectives = []
  }
  // the knee: where the server stops completing what is offered (rates), shaded between the last point that kept
  // up and the first that did not
  const firstBehind = r.points.findIndex((p) => !keptUp(p))
  const knee =
    mode === 'rate' && firstBehind > 0
      ? {
          from: (r.points[firstBehind - 1] as SweepPoint).offered,
          to: (r.points[firstBehind] as SweepPoint).offered,
          label: `knee: completed < ${KEPT_UP * 100} % of offered`,
        }
      : undefined
  const xLabel = mode === 'rate' ? 'offered load (req/s)' : 'concurrency (requests in flight)'
  const latency = (key: 'ttft' | 'tpot' | 'e2e', what: string): string => {
    const series: ChartSeries[] = (['p50', 'p90', 'p99'] as const).map((p, k) => ({
      name: `${what} ${p}`,
      color: PALETTE[k] as string,
      points: r.points.map((pt) => ({ x: pt.offered, y: (pt[key] as Percentiles)[p], hollow: pt.invalid !== null })),
    }))
    // the SLO's limits on this chart's column, each a line at its limit
    const hLines = objectives
      .filter((o) => CHART_FIELDS[key].includes(o.field) && o.kind === 'duration')
      .map((o) => ({ y: o.limit, label: `SLO ${o.field} ${o.aggregation} ≤ ${o.limit} ms`, color: '#c00' }))
    return svgChart({
      title: `${what} against offered load`,
      xLabel,
      yLabel: `${what} (ms)`,
      series,
      hLines,
      ...(knee === undefined ? {} : { xBand: knee }),
    })
  }
  // tokens and requests a second are on scales 100× apart: each has its own chart, so neither lies flat
  const tokens = svgChart({
    title: 'Output tokens/s against offered load',
    xLabel,
    yLabel: 'output tok/s',
    series: [
      {
        name: 'output tok/s',
        color: PALETTE[0] as string,
        points: r.points.map((p) => ({ x: p.offered, y: p.outputTokenThroughput })),
      },
    ],
    ...(knee === undefined ? {} : { xBand: knee }),
  })
  const throughput = svgChart({
    title: 'Completed requests/s and goodput against offered load',
    xLabel,
    yLabel: 'req/s',
    ...(knee === undefined ? {} : { xBand: knee }),
    series: [
      ...(mode === 'rate'
        ? [
            {
              name: 'offered req/s',
              color: '#999',
              points: r.points.map((p) => ({ x: p.offered, y: p.offered })),
            },
          ]
        : []),
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
          tag: mode === 'rate' ? `${n(p.offered, 2)} req/s` : `${p.offered} in flight`,
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
  const sentence = interpretation(r, objectives, firstBehind)
  const ttftNote =
    r.points[0]?.ttftSource === 'client_ttft'
      ? " TTFT is the client's (client_ttft): the server reported no timestamps."
      : ''
  const intro = `<p>${r.points.length} points, one full run each (its folder, CSV and report are linked below). Times in ms;
${mode === 'rate' ? "latencies from each request's arrival" : "latencies from each request's send (the wait for a slot is not latency in a closed loop)"}.${ttftNote}
A hollow point is an invalid run.</p>
<p id="interpretation"><b>${esc(sentence)}</b></p>`
  return chartPage(
    title,
    intro,
    [
      latency('ttft', 'TTFT'),
      latency('tpot', 'TPOT'),
      latency('e2e', 'end-to-end latency'),
      tokens,
      throughput,
      pareto,
      table,
    ].join('\n'),
  )
}

/** The sweep in a sentence: where the SLO stopped holding, where the server stopped keeping up. */
function interpretation(r: SweepResult, objectives: readonly Objective[], firstBehind: number): string {
  const unit = r.points[0]?.mode === 'concurrency' ? '' : ' req/s'
  const parts: string[] = []
  if (objectives.length > 0) {
    const failing = r.points.find((p) => p.slo?.met === false)
    parts.push(
      r.largestPassing === null
        ? 'No point met the SLO.'
        : `The SLO held up to ${r.largestPassing}${unit}${
            failing === undefined
              ? ', the largest point swept'
              : `; at ${failing.offered}${unit} it did not (${(failing.slo?.verdicts ?? [])
                  .filter((v) => v.status === 'fail')
                  .map(verdictText)
                  .join(', ')})`
          }.`,
    )
  }
  if (r.points[0]?.mode === 'rate')
    parts.push(
      firstBehind < 0
        ? `The server kept up with every offered rate (it completed at least ${KEPT_UP * 100} % of what arrived).`
        : `From ${r.points[firstBehind]?.offered} req/s the server completed less than ${KEPT_UP * 100} % of what arrived (the requests in flight grew through the run): it is saturated there.`,
    )
  const best = [...r.points].sort((a, b) => (b.outputTokenThroughput ?? 0) - (a.outputTokenThroughput ?? 0))[0]
  if (best !== undefined && best.outputTokenThroughput !== null)
    parts.push(`Most output: ${best.outputTokenThroughput.toFixed(0)} tok/s at ${best.offered}${unit}.`)
  return parts.join(' ')
}
