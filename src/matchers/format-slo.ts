import { existsSync } from 'node:fs'
import { DURATION_COLUMNS, fieldScale, MS_PER_S, NUMERIC_COLUMNS, type NumericColumn } from '../common/columns.ts'
import type { RequestRecord } from '../record/request-record.ts'
import type { MetricsSeries } from '../server-metrics/metrics-sampler.ts'
import { readMetricsSeries } from '../server-metrics/series-from-rows.ts'
import { fieldValues, goodputUnjudgeable, type ObjectiveResult, type SloEvaluation } from '../slo/evaluate-slo.ts'
import { type Objective, objectiveLabel } from '../slo/slo-spec.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { percentileSorted } from '../summarise/statistics.ts'
import { workerAt } from '../summarise/worker-at.ts'

const MS = new Set<string>(DURATION_COLUMNS)
const STAGES = ['queue_time_in_router', 'tokenize_time', 'pure_queue_time', 'prefill_time', 'network_time'] as const
const STAGE_LABELS = ['router_q', 'tokenize', 'queue', 'prefill', 'network']
const WORST = 5

export function formatValue(field: string, v: number | undefined): string {
  if (v === undefined) return '—'
  if (MS.has(field)) return `${v.toFixed(1)} ms`
  if (field === 'success_rate' || field === 'goodput') return v.toFixed(4)
  if (field === 'request_throughput') return `${v.toFixed(2)} req/s`
  if (field === 'output_token_throughput') return `${v.toFixed(1)} tok/s`
  return Number.isInteger(v) ? String(v) : v.toFixed(3)
}

function missText(r: ObjectiveResult): string {
  const { objective: o, observed } = r
  if (observed === undefined || o.limit === 0) return ''
  const upper = o.comparator === '<' || o.comparator === '<='
  const pct = (Math.abs(observed - o.limit) / Math.abs(o.limit)) * 100
  return ` (${upper ? 'over' : 'under'} by ${pct.toFixed(1)}%)`
}

function resultLine(r: ObjectiveResult): string {
  const o = r.objective
  const label = objectiveLabel(o)
  if (r.status === 'not_reported') return `  ! ${label}: not reported: ${r.reason}`
  if (r.status === 'too_few_samples') return `  ! ${label}: ${r.reason}`
  const limit = `${o.comparator} ${formatValue(o.field, o.limit)}`
  const aggregation =
    o.kind === 'rate'
      ? ''
      : ` ${o.percentile !== undefined ? `p${String(o.percentile).replace('.', '')}` : o.aggregation}`
  const observed = `${o.field}${aggregation} = ${formatValue(o.field, r.observed)}`
  return r.status === 'pass'
    ? `  ✓ ${label}: ${observed}, limit ${limit}`
    : `  ✗ ${label}: ${observed}, limit ${limit}${missText(r)}`
}

function distributionLine(run: BenchRun, field: string): string {
  const sorted = fieldValues(run.table, field).sort()
  const f = (p: number): string => formatValue(field, percentileSorted(sorted, p))
  const max = formatValue(field, sorted[sorted.length - 1])
  return `      n=${sorted.length} · p50 ${f(50)} · p90 ${f(90)} · p99 ${f(99)} · max ${max}`
}

const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length))
const ms = (v: number | undefined): string => (v === undefined ? '—' : `${(v * MS_PER_S).toFixed(1)} ms`)

/** The five worst requests by `field`, with where their time went, so the reader sees the stage at fault. */
export function worstRequests(run: BenchRun, field: string, n = WORST): string[] {
  const scale = fieldScale(field)
  const { table } = run
  const values = NUMERIC_COLUMNS.includes(field as NumericColumn) ? table.numbers(field as NumericColumn) : undefined
  const value = (r: RequestRecord): number => ((r as unknown as Record<string, number>)[field] as number) * scale
  // only the n worst rows are made into records
  const worst = Array.from({ length: table.length }, (_, i) => i)
    .filter((i) => table.success(i) && !Number.isNaN(values?.[i] ?? Number.NaN))
    .sort((a, b) => (values?.[b] as number) - (values?.[a] as number))
    .slice(0, n)
    .map((i) => table.record(i))
  const idWidth = Math.max(6, ...worst.map((r) => r.req_id.length)) + 2
  if (PER_TOKEN.has(field)) return perTokenRows(run, field, worst, idWidth, value)
  const header = `        ${pad('req_id', idWidth)}${pad(field, 12)}${STAGE_LABELS.map((l) => pad(l, 11)).join('')}host`
  const rows = worst.map(
    (r) =>
      `        ${pad(r.req_id, idWidth)}${pad(formatValue(field, value(r)), 12)}` +
      `${STAGES.map((s) => pad(ms(r[s]), 11)).join('')}${r.host}`,
  )
  return [`      worst ${worst.length} by ${field}:`, header, ...rows]
}

/** Fields of the decode phase: what explains them is decoding, not the stages before the first token. */
const PER_TOKEN = new Set(['tpot', 'itl_mean', 'itl_max', 'decode_time'])

/**
 * The worst requests by a per-token field, with what explains per-token latency: the decode phase's length and
 * tokens, the longest gap between two tokens, the requests the client had in flight while it decoded (at most),
 * and the serving worker's own running requests then (its num_running_reqs, from server-metrics.csv, at most).
 */
function perTokenRows(
  run: BenchRun,
  field: string,
  worst: RequestRecord[],
  idWidth: number,
  value: (r: RequestRecord) => number,
): string[] {
  const { table } = run
  const arrival = table.numbers('arrival_time')
  const finish = table.numbers('finish_time')
  const inFlight = (from: number, to: number): number => {
    let n = 0
    for (let i = 0; i < table.length; i++)
      if ((arrival[i] as number) < to && ((finish[i] as number) > from || Number.isNaN(finish[i] as number))) n++
    return n
  }
  const series = serverSeries(run)
  const running = (host: string, from: number, to: number): string => {
    const worker = workerAt(run.summary, host)
    const column = worker === undefined ? undefined : series?.values.get(worker)?.get('num_running_reqs')
    if (series === undefined || column === undefined) return '—'
    let most: number | undefined
    series.t.forEach((t, k) => {
      const v = column[k]
      if (t >= from && t <= to && v !== null && v !== undefined) most = Math.max(most ?? v, v)
    })
    return most === undefined ? '—' : String(most)
  }
  const header =
    `        ${pad('req_id', idWidth)}${pad(field, 12)}${pad('decode', 11)}${pad('out_tok', 9)}${pad('itl_max', 11)}` +
    `${pad('in_flight', 11)}${pad('running', 9)}host`
  const rows = worst.map((r) => {
    const from = (r.finish_time ?? 0) - (r.decode_time ?? 0)
    const to = r.finish_time ?? from
    return (
      `        ${pad(r.req_id, idWidth)}${pad(formatValue(field, value(r)), 12)}${pad(ms(r.decode_time), 11)}` +
      `${pad(String(r.actual_output_tokens ?? '—'), 9)}${pad(ms(r.itl_max), 11)}${pad(String(inFlight(from, to)), 11)}` +
      `${pad(running(r.host, from, to), 9)}${r.host}`
    )
  })
  return [
    `      worst ${worst.length} by ${field} (decode: first token to last; in_flight: the client's requests in the ` +
      "system meanwhile, at most; running: the worker's own num_running_reqs meanwhile, at most):",
    header,
    ...rows,
  ]
}

/** The run's server-metrics.csv as series, where it was written. */
function serverSeries(run: BenchRun): MetricsSeries | undefined {
  const path = run.files.serverMetrics
  if (path === undefined || !existsSync(path)) return undefined
  try {
    return readMetricsSeries(path)
  } catch {
    return undefined
  }
}

const normalizedOf = (e: SloEvaluation): Objective[] => e.results.map((r) => r.objective)

export function formatEvaluation(run: BenchRun, evaluation: SloEvaluation): string {
  const failed = evaluation.results.filter((r) => r.status !== 'pass')
  const lines: string[] = []
  for (const r of evaluation.results) {
    lines.push(resultLine(r))
    if (r.status === 'fail' && r.objective.kind === 'duration')
      lines.push(distributionLine(run, r.objective.field), ...worstRequests(run, r.objective.field))
  }
  // unjudgeable is not "not met": a figure nobody reported is said as such
  const missed = failed.filter((r) => r.status === 'fail').length
  const unjudged = failed.length - missed
  const head =
    failed.length === 0
      ? `all ${evaluation.results.length} objectives held`
      : [
          missed > 0 ? `${missed} of ${evaluation.results.length} objectives not met` : '',
          unjudged > 0 ? `${unjudged} of ${evaluation.results.length} could not be judged` : '',
        ]
          .filter((x) => x !== '')
          .join(', ')
  const unknownGoodput = goodputUnjudgeable(run, normalizedOf(evaluation))
  return [
    head,
    ...lines,
    `  goodput ${
      unknownGoodput === undefined
        ? `${evaluation.goodput.fraction.toFixed(4)} (${evaluation.goodput.perSecond.toFixed(2)} req/s)`
        : '— (unknown: a limit names a field no request reported)'
    } · success_rate ${run.summary.success_rate.toFixed(4)} · ${run.table.length} requests`,
    `CSV: ${run.files.csv}`,
    // the absolute path: a failure message is read far from where the run wrote it
    ...(run.files.html === undefined ? [] : [`report: ${run.files.html}`]),
  ].join('\n')
}
