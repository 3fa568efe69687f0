import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { redactDeep } from '../common/redact.ts'
import type { RecordTable } from '../record/record-table.ts'
import type { MetricsSeries } from '../server-metrics/metrics-sampler.ts'
import { readMetricsSeries } from '../server-metrics/series-from-rows.ts'
import type { BenchSummary } from '../summarise/bench-run.ts'
import { htmlReport } from './html-report.ts'

/**
 * The one owner of what a run's folder says about it: summary.json (secrets masked) and report.html under one
 * title, whoever writes them — the run itself, a matcher adding its verdicts, `merge`, `report`.
 */
export function runTitle(summary: BenchSummary, requests: number = summary.requests): string {
  if (summary.name !== undefined) return summary.name
  const rate = summary.target_rate === null ? '∞' : summary.target_rate.toFixed(2).replace(/\.?0+$/u, '')
  const merged = (summary as { merged_from?: unknown[] }).merged_from
  return `${requests} requests at ${rate} req/s${Array.isArray(merged) ? ` (${merged.length} shards merged)` : ''}`
}

export const summaryJson = (summary: BenchSummary): string => `${JSON.stringify(redactDeep(summary), null, 2)}\n`

/** The servers' series a run folder's server-metrics.csv holds; none without that file. */
export function folderSeries(dir: string): MetricsSeries | undefined {
  const csv = join(dir, 'server-metrics.csv')
  return existsSync(csv) ? readMetricsSeries(csv) : undefined
}

/** report.html's text in pieces (`htmlReport`), for `writeArtifact`. */
export function runReport(
  table: RecordTable,
  summary: BenchSummary,
  series: MetricsSeries | undefined,
): Iterable<string> {
  return htmlReport(runTitle(summary, table.length), table, summary, series)
}

/** summary.json and report.html of the run in `dir`, as the writer gives them, each written only when asked. */
export function runFileTexts(
  dir: string,
  table: RecordTable,
  summary: BenchSummary,
  series?: MetricsSeries,
): Array<{ path: string; text: () => string | Iterable<string> }> {
  return [
    { path: join(dir, 'summary.json'), text: () => summaryJson(summary) },
    { path: join(dir, 'report.html'), text: () => runReport(table, summary, series ?? folderSeries(dir)) },
  ]
}
