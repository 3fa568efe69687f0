import { existsSync } from 'node:fs'
import { writeArtifact } from '../common/artifact-file.ts'
import { redactDeep } from '../common/redact.ts'
import { htmlReport } from '../report/html-report.ts'
import { readMetricsSeries } from '../server-metrics/series-from-rows.ts'
import type { BenchRun } from '../summarise/bench-run.ts'

/**
 * Puts a matcher's verdicts (and the test's name) at the top of the run's report.html and into its summary.json:
 * the report is written when the run ends, before any objective is judged, so it is written again. A report that
 * cannot be rewritten stays as it was; the verdicts are still in the failure message and the table.
 */
export function reportVerdicts(run: BenchRun, verdicts: readonly string[], testName: string | undefined): void {
  const summary = run.summary
  summary.verdicts = [...(summary.verdicts ?? []), ...verdicts]
  if (testName !== undefined) summary.test = testName
  // a run whose folder is gone (or one made in memory) keeps its verdicts in the message and the table only
  if (!existsSync(run.files.json)) return
  try {
    writeArtifact(run.files.json, `${JSON.stringify(redactDeep(summary), null, 2)}\n`)
    if (run.files.html === undefined) return
    const series =
      run.files.serverMetrics !== undefined && existsSync(run.files.serverMetrics)
        ? readMetricsSeries(run.files.serverMetrics)
        : undefined
    const title = summary.name ?? `${summary.requests} requests at ${summary.target_rate ?? '∞'} req/s`
    writeArtifact(run.files.html, htmlReport(title, run.table, summary, series))
  } catch {
    // the run's files stay as they were written
  }
}
