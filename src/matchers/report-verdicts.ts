import { existsSync } from 'node:fs'
import { dirname } from 'node:path'
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
