import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { RequestRecord } from '../record/request-record.ts'
import type { MetricsSeries } from '../server-metrics/metrics-sampler.ts'
import type { BenchSummary } from '../summarise/bench-run.ts'
import { reportData } from './report-data.ts'
import { REPORT_SCRIPT } from './report-script.ts'

const require = createRequire(import.meta.url)
/** uPlot draws the line and bar charts; inlined so the report opens offline as one file. */
const UPLOT_JS = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8')
const UPLOT_CSS = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8')

const esc = (s: string): string =>
  s.replace(/[&<>"]/gu, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string)
const tokRate = (v: number | null, what: string): string =>
  v === null ? `${what} tokens not reported by the server` : `${v.toFixed(0)} ${what} tok/s`
const fmt = (v: number | undefined): string => (v === undefined ? '—' : v.toFixed(1))

function metricsTable(summary: BenchSummary): string {
  const rows = Object.entries(summary.metrics).map(
    ([k, d]) =>
      `<tr><td>${esc(k)}</td><td>${d.count}</td><td>${fmt(d.mean)}</td><td>${fmt(d.p50)}</td><td>${fmt(d.p90)}</td><td>${fmt(d.p99)}</td><td>${fmt(d.max)}</td></tr>`,
  )
  return `<table><thead><tr><th>metric (ms)</th><th>n</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

function hostsTable(s: BenchSummary): string {
  const total = s.requests || 1
  const rows = Object.entries(s.requests_per_host).map(
    ([h, c]) => `<tr><td>${esc(h)}</td><td>${c}</td><td>${((c / total) * 100).toFixed(1)}%</td></tr>`,
  )
  return `<table id="hosts-table"><thead><tr><th>worker</th><th>requests</th><th>share</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

function facts(s: BenchSummary): string {
  const items: Array<[string, string]> = [
    ['target', s.target],
    ['started', s.started_at],
    ['requests', `${s.requests} (${s.failures} failed, success rate ${(s.success_rate * 100).toFixed(2)}%)`],
    [
      'rate',
      `target ${s.target_rate ?? '∞'} · scheduled ${s.scheduled_rate?.toFixed(2) ?? '—'} · achieved ${s.achieved_rate?.toFixed(2) ?? '—'} req/s`,
    ],
    [
      'throughput',
      `${s.request_throughput.toFixed(2)} req/s · ${tokRate(s.input_token_throughput, 'input')} · ${tokRate(s.output_token_throughput, 'output')}`,
    ],
    [
      'client',
      `dispatch lag p99 ${s.dispatch_lag_ms.p99.toFixed(2)} ms · event-loop delay p99 ${s.event_loop_delay_ms.p99.toFixed(2)} ms`,
    ],
    ['clock', s.clock.note],
    ['server', s.server_info?.['version'] === undefined ? 'version unknown' : String(s.server_info['version'])],
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
  const rows = Object.entries(sm.sources).map(([name, o]) => {
    const p = sm.peaks[name] ?? {}
    const counted = sm.requests_per_worker?.[name]
    return `<tr><td>${esc(name)}</td><td>${cell(p['num_running_reqs'])}</td><td>${cell(p['num_queue_reqs'])}</td><td>${cell(p['token_usage'])}</td><td>${cell(counted)}</td><td>${o.samples}</td><td>${esc(o.note ?? '')}</td></tr>`
  })
  return `<table id="server-metrics-table"><thead><tr><th>source</th><th>peak running</th><th>peak queued</th><th>peak token usage</th><th>requests it counted</th><th>samples</th><th>note</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

/** One self-contained HTML file: stage timeline, percentile chart, concurrency and queue depth, per-worker split. */
export function htmlReport(
  title: string,
  records: readonly RequestRecord[],
  summary: BenchSummary,
  serverSeries?: MetricsSeries,
): string {
  const data = JSON.stringify(reportData(title, records, summary, serverSeries)).replaceAll('<', '\\u003c')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · vitest-llm-perf</title>
<style>${UPLOT_CSS}
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px}dt{color:#666}
table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #eee}td:first-child,th:first-child{text-align:left}
#legend span{margin-right:14px;white-space:nowrap}#legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
.chart{width:100%;min-height:300px}
</style></head><body>
<h1>${esc(title)}</h1>
${facts(summary)}
<h2>Request timeline</h2><div id="legend"></div><div><canvas id="timeline"></canvas></div>
<h2>Latency percentiles</h2><div id="percentiles" class="chart"></div><div id="percentiles-e2e" class="chart"></div><div id="percentiles-token" class="chart"></div>${metricsTable(summary)}
<h2>Concurrency and server queue depth over time</h2><div id="overtime" class="chart"></div>
<h2>Running and queued requests per worker (the servers' own /metrics)</h2><div id="server-gauges" class="chart"></div>${serverMetricsTable(summary)}
<h2>Requests per worker</h2><div id="hosts" class="chart"></div>${hostsTable(summary)}
<p>Every figure is recomputable from requests.csv: percentiles interpolate linearly between closest ranks (numpy's default).</p>
<script id="data" type="application/json">${data}</script>
<script>${UPLOT_JS}</script>
<script>${REPORT_SCRIPT}</script>
</body></html>
`
}
