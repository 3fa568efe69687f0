import { DURATION_COLUMNS, fieldScale, MS_PER_S, NUMERIC_COLUMNS, type NumericColumn } from '../common/columns.ts'
import type { RequestRecord } from '../record/request-record.ts'
import { fieldValues, type ObjectiveResult, type SloEvaluation } from '../slo/evaluate-slo.ts'
import type { Objective } from '../slo/slo-spec.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { percentileSorted } from '../summarise/percentile.ts'

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

/** "ttft p99", or the user's k6 expression quoted: "ttft 'p(99)<500'". */
export function objectiveLabel(o: Objective): string {
  return o.source.includes(':')
    ? o.kind === 'rate'
      ? o.field
      : `${o.field} ${o.aggregation}`
    : `${o.field} '${o.source}'`
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
  const header = `        ${pad('req_id', idWidth)}${pad(field, 12)}${STAGE_LABELS.map((l) => pad(l, 11)).join('')}host`
  const rows = worst.map(
    (r) =>
      `        ${pad(r.req_id, idWidth)}${pad(formatValue(field, value(r)), 12)}` +
      `${STAGES.map((s) => pad(ms(r[s]), 11)).join('')}${r.host}`,
  )
  return [`      worst ${worst.length} by ${field}:`, header, ...rows]
}

export function formatEvaluation(run: BenchRun, evaluation: SloEvaluation): string {
  const failed = evaluation.results.filter((r) => r.status !== 'pass')
  const lines: string[] = []
  for (const r of evaluation.results) {
    lines.push(resultLine(r))
    if (r.status === 'fail' && r.objective.kind === 'duration')
      lines.push(distributionLine(run, r.objective.field), ...worstRequests(run, r.objective.field))
  }
  const head =
    failed.length === 0
      ? `all ${evaluation.results.length} objectives held`
      : `${failed.length} of ${evaluation.results.length} objectives not met`
  return [
    head,
    ...lines,
    `  goodput ${evaluation.goodput.fraction.toFixed(4)} (${evaluation.goodput.perSecond.toFixed(2)} ` +
      `req/s) · success_rate ${run.summary.success_rate.toFixed(4)} · ${run.table.length} requests`,
    `CSV: ${run.files.csv}`,
    // the absolute path: a failure message is read far from where the run wrote it
    ...(run.files.html === undefined ? [] : [`report: ${run.files.html}`]),
  ].join('\n')
}
