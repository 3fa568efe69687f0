import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { PERCENTILE_CHARTS } from '../common/metric-registry.ts'
import { redactDeep } from '../common/redact.ts'
import type { RecordTable } from '../record/record-table.ts'
import type { MetricsSeries } from '../server-metrics/metrics-sampler.ts'
import type { BenchSummary } from '../summarise/bench-run.ts'
import { cacheStateText } from '../summarise/cache-state.ts'
import { anyNotPassed, verdictText } from '../summarise/verdict.ts'
import { workerAt } from '../summarise/worker-at.ts'
import { type ReportColumns, reportData, TIMELINE_REQUESTS, workerLabel } from './report-data.ts'
import { reportPage } from './report-page.ts'

const require = createRequire(import.meta.url)
/** uPlot draws the line and bar charts; inlined so the report opens offline as one file. */
const UPLOT_JS = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8')
const UPLOT_CSS = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8')

const esc = (s: string): string =>
  s.replace(/[&<>"]/gu, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string)
const tokRate = (v: number | null, what: string): string =>
  v === null ? `${what} tokens not reported by the server` : `${v.toFixed(0)} ${what} tok/s`
const fmt = (v: number | undefined): string => (v === undefined ? '—' : v.toFixed(1))
const ms = (v: number): string => `${v.toFixed(2)} ms`

const tr = (cells: ReadonlyArray<string | number>, tag = 'td'): string =>
  `<tr>${cells.map((c) => `<${tag}>${c}</${tag}>`).join('')}</tr>`
const table = (headers: readonly string[], rows: readonly string[], id?: string): string => {
  const head = `<thead>${tr(headers, 'th')}</thead>`
  return `<table${id === undefined ? '' : ` id="${id}"`}>${head}<tbody>${rows.join('')}</tbody></table>`
}

function metricsTable(summary: BenchSummary): string {
  const rows = Object.entries(summary.metrics).map(([k, d]) =>
    tr([esc(k), d.count, fmt(d.mean), fmt(d.p50), fmt(d.p90), fmt(d.p99), fmt(d.max)]),
  )
  return table(['metric (ms)', 'n', 'mean', 'p50', 'p90', 'p99', 'max'], rows)
}

function hostsTable(s: BenchSummary): string {
  const total = s.requests || 1
  const rows = Object.entries(s.requests_per_host).map(([h, c]) =>
    tr([esc(workerLabel(s, h)), c, `${((c / total) * 100).toFixed(1)}%`]),
  )
  return table(['worker', 'requests', 'share'], rows, 'hosts-table')
}

/** The verdicts the test's matchers gave, at the top: what a reader opening a failed run looks for first. */
function verdicts(s: BenchSummary): string {
  if (s.verdicts === undefined || s.verdicts.length === 0) return ''
  const failed = anyNotPassed(s.verdicts)
  const goodput =
    s.goodput === null
      ? ''
      : ` · goodput ${(s.goodput.fraction * 100).toFixed(1)} % (${s.goodput.per_second.toFixed(2)} req/s)`
  return `<p id="verdicts" class="${failed ? 'failed' : 'passed'}"><b>${failed ? 'SLO not met' : 'SLO met'}</b>${goodput}: ${s.verdicts
    .map((v) => esc(verdictText(v)))
    .join(' · ')}</p>`
}

function facts(s: BenchSummary): string {
  const items: Array<[string, string]> = [
    ['target', s.target],
    ['started', s.started_at],
    ['requests', `${s.requests} (${s.failures} failed, success rate ${(s.success_rate * 100).toFixed(2)}%)`],
    [
      'rate',
      `target ${s.target_rate ?? '∞'} · scheduled ${s.scheduled_rate?.toFixed(2) ?? '—'} · achieved ` +
        `${s.achieved_rate?.toFixed(2) ?? '—'} req/s`,
    ],
    [
      'throughput',
      `${s.request_throughput.toFixed(2)} req/s · ${tokRate(s.input_token_throughput, 'input')} · ` +
        `${tokRate(s.output_token_throughput, 'output')}`,
    ],
    ['client', `dispatch lag p99 ${ms(s.dispatch_lag_ms.p99)} · event-loop delay p99 ${ms(s.event_loop_delay_ms.p99)}`],
    ['clock', s.clock.note],
    ['server', s.server_info?.['version'] === undefined ? 'version unknown' : String(s.server_info['version'])],
    ['cache at start', cacheStateText(s.server_cache_state)],
  ]
  if (Object.keys(s.errors_by_type).length > 0)
    items.push([
      'errors',
      Object.entries(s.errors_by_type)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', '),
    ])
  for (const w of s.warnings) items.push(['warning', w])
  return `<dl>${items.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>`
}

function serverMetricsTable(s: BenchSummary): string {
  const sm = s.server_metrics
  if (sm === null) return '<p class="not-reported">not sampled (metricsIntervalMs: 0)</p>'
  const cell = (v: number | undefined): string => (v === undefined ? 'not reported' : String(Number(v.toFixed(3))))
  const clientCount = (name: string): number | undefined =>
    Object.entries(s.requests_per_host).find(([h]) => workerAt(s, h) === name)?.[1]
  const rows = Object.entries(sm.sources).map(([name, o]) => {
    const p = sm.peaks[name] ?? {}
    const counted = sm.requests_per_worker?.[name]
    const seen = clientCount(name)
    const differs =
      counted !== undefined && seen !== undefined && counted !== seen
        ? `counted ${counted} where the client saw ${seen} from it: it counts what it finished during the run ` +
          '(warm-up requests and ones still running at either end differ), and failed or aborted requests are ' +
          'not in its count'
        : undefined
    const peaks = [p['num_running_reqs'], p['num_queue_reqs'], p['token_usage'], counted].map(cell)
    return tr([esc(name), ...peaks, o.samples, esc([o.note, differs].filter(Boolean).join('; '))])
  })
  const headers = [
    'source',
    'peak running',
    'peak queued',
    'peak token usage',
    'requests it counted',
    'samples',
    'note',
  ]
  return table(headers, rows, 'server-metrics-table')
}

/** The failure schedule's steps as they happened (also drawn on every time axis). */
function eventsList(s: BenchSummary): string {
  if (s.events === undefined || s.events.length === 0) return ''
  return `<h2>Events</h2>${table(
    ['seconds since start', 'what'],
    s.events.map((e) => tr([e.t_s.toFixed(2), esc(e.what)])),
    'events-table',
  )}`
}

/** A multi-turn run: TTFT and the cache hit rate for first and later turns, and the hit rate over time. */
function conversationSection(s: BenchSummary): string {
  const c = s.conversations
  if (c === null || c === undefined) return ''
  const ms = (v: number | undefined): string => (v === undefined ? 'none' : v.toFixed(1))
  const rate = (v: number | null): string => (v === null ? 'not reported' : `${(100 * v).toFixed(1)} %`)
  const row = (name: string, d: typeof c.ttft_ms.first_turn, hit: number | null): string =>
    tr([esc(name), d?.count ?? 0, ms(d?.p50), ms(d?.p90), ms(d?.p99), rate(hit)])
  const rows = [
    row('first turns', c.ttft_ms.first_turn, c.cache_hit_rate.first_turn),
    row('later turns', c.ttft_ms.later_turns, c.cache_hit_rate.later_turns),
  ]
  return `<h2>Conversations: ${c.sessions} sessions, by turn</h2>
${table(['turns', 'answered', 'TTFT p50 (ms)', 'p90', 'p99', 'cache hit rate'], rows, 'conversation-table')}
<div id="cache-over-time" class="chart"></div>`
}

const timelineNote = (requests: number): string =>
  requests > TIMELINE_REQUESTS
    ? ` (every ${Math.ceil(requests / TIMELINE_REQUESTS)}th of ${requests.toLocaleString('en')} requests)`
    : ''

/** Data inside a <script> element: JSON, its `<` escaped so no string can close the element. */
const scriptJson = (value: unknown): string => JSON.stringify(redactDeep(value)).replaceAll('<', '\\u003c')

/** Values a JSON slice holds: a typed column is written SLICE at a time, never as one boxed array. */
const SLICE = 4096

/** A typed column as the JSON array JSON.stringify writes for its values, NaN as null. */
function* typedJson(values: Float64Array): Generator<string> {
  yield '['
  for (let at = 0; at < values.length; at += SLICE) {
    const part = Array.from(values.subarray(at, at + SLICE), (v) => (Number.isNaN(v) ? null : v))
    yield `${at === 0 ? '' : ','}${JSON.stringify(part).slice(1, -1)}`
  }
  yield ']'
}

/**
 * The report's data as JSON in pieces, a column or a field at a time: a 20,000-request run's is ~2 MB, and as one
 * string it was copied four times over (stringify, escape, the page, its bytes), most of a run's peak memory growth.
 */
function* dataPieces(data: ReportColumns): Generator<string> {
  const nested = new Set<string>(['requests', 'percentiles'])
  let first = true
  yield '{'
  for (const [key, value] of Object.entries(data)) {
    yield `${first ? '' : ','}${JSON.stringify(key)}:`
    first = false
    if (!nested.has(key)) {
      yield scriptJson(value)
      continue
    }
    let inner = true
    yield '{'
    for (const [k, v] of Object.entries(value as object)) {
      yield `${inner ? '' : ','}${JSON.stringify(k)}:`
      inner = false
      if (v instanceof Float64Array) yield* typedJson(v)
      else yield scriptJson(v)
    }
    yield '}'
  }
  yield '}'
}

/**
 * One self-contained HTML file: stage timeline, percentile chart, concurrency and queue depth, per-worker split. In
 * pieces, for the writer to write one after another (`writeArtifact`), joined they are the page. The data is built
 * here, before any piece is written: a fault in it is the report's, not the writer's.
 */
export function htmlReport(
  title: string,
  rows: RecordTable,
  summary: BenchSummary,
  serverSeries?: MetricsSeries,
): Iterable<string> {
  return pagePieces(title, summary, reportData(title, rows, summary, serverSeries))
}

function* pagePieces(title: string, summary: BenchSummary, data: ReportColumns): Generator<string> {
  yield `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · vitest-llm-perf</title>
<style>${UPLOT_CSS}
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px}dt{color:#666}
table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #eee}
td:first-child,th:first-child{text-align:left}
#legend span{margin-right:14px;white-space:nowrap}
#legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
.chart{width:100%;min-height:300px;margin-bottom:28px}
#verdicts{padding:6px 10px;border-left:4px solid}#verdicts.failed{border-color:#cc0000}#verdicts.passed{border-color:#6aa84f}
</style></head><body>
<h1>${esc(summary.test === undefined ? title : `${summary.test} · ${title}`)}</h1>
${verdicts(summary)}
${facts(summary)}
<h2>Request timeline${timelineNote(summary.requests)}</h2>
<div id="legend"></div><div><canvas id="timeline"></canvas></div>
<h2>Latency percentiles</h2>${PERCENTILE_CHARTS.map((c) => `<div id="${c.id}" class="chart"></div>`).join('')}
${metricsTable(summary)}
<h2>Concurrency and server queue depth over time</h2><div id="overtime" class="chart"></div>
<h2>Running and queued requests per worker (the servers' own /metrics)</h2>
<div id="server-gauges" class="chart"></div>${serverMetricsTable(summary)}
<h2>KV cache and prefix cache per worker (the servers' own /metrics)</h2><div id="kv" class="chart"></div>
${summary.server_metrics?.sources['router'] === undefined ? '' : '<h2>The router: requests in flight and worker health</h2><div id="router-view" class="chart"></div>'}
${summary.server_metrics?.gpus === null || summary.server_metrics?.gpus === undefined ? '' : `<h2>GPUs (${esc(summary.server_metrics.gpus.source ?? 'nvidia-smi')})</h2><div id="gpus"></div>`}
<h2>Requests per worker</h2><div id="hosts" class="chart"></div>${hostsTable(summary)}${conversationSection(summary)}${eventsList(summary)}
<p>Every figure is recomputable from requests.csv: percentiles interpolate linearly between closest ranks
(numpy's default).</p>
<script id="data" type="application/json">`
  yield* dataPieces(data)
  yield `</script>
<script>${UPLOT_JS}</script>
<script>(${String(reportPage)})(JSON.parse(document.getElementById('data').textContent), uPlot)</script>
</body></html>
`
}
