import { existsSync } from 'node:fs'
import { dirname } from 'node:path'
import type { MatcherState } from 'vitest'
import { writeArtifact } from '../common/artifact-file.ts'
import { folderSeries, runReport, summaryJson } from '../report/run-files.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import type { Verdict } from '../summarise/verdict.ts'

/**
 * Puts a matcher's verdicts (and the test's name) at the top of the run's report.html and into its summary.json:
 * the report is written when the run ends, before any objective is judged, so it is written again. A report that
 * cannot be rewritten stays as it was; the verdicts are still in the failure message and the table.
 */
export function reportVerdicts(run: BenchRun, verdicts: readonly Verdict[], testName: string | undefined): void {
  const summary = run.summary
  summary.verdicts = [...(summary.verdicts ?? []), ...verdicts]
  if (testName !== undefined) summary.test = testName
  // a run whose folder is gone (or one made in memory) keeps its verdicts in the message and the table only
  if (!existsSync(run.files.json)) return
  try {
    writeArtifact(run.files.json, summaryJson(summary))
    if (run.files.html === undefined) return
    writeArtifact(run.files.html, runReport(run.table, summary, folderSeries(dirname(run.files.json))))
  } catch {
    // the run's files stay as they were written
  }
}

/**
 * A matcher's verdicts next to this run's row in task.meta — the end-of-run table and runs.json — and in its
 * summary.json and report.html: every gate's verdict (an SLO's, the history's) is seen where the run is listed.
 */
export function recordVerdicts(state: MatcherState, run: BenchRun, verdicts: Verdict[]): void {
  const rows = (state.task as { meta?: { llmPerf?: Array<{ csv: string; slo: Verdict[] }> } } | undefined)?.meta
    ?.llmPerf
  const row = rows?.find((r) => r.csv === run.files.csv)
  if (row !== undefined) row.slo.push(...verdicts)
  reportVerdicts(run, verdicts, state.currentTestName)
}
