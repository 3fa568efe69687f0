import { ArtifactWriteError } from '../common/artifact-file.ts'
import { databaseUrlProblem } from '../common/masked-url.ts'
import { redact } from '../common/redact.ts'
import type { ValidatedOptions } from '../executors/bench-options-schema.ts'
import { gitLabels } from '../history/git-labels.ts'
import { historyDbOf } from '../history/history-store.ts'
import { recordRun } from '../history/open-history.ts'
import { isPostgresUrl } from '../history/postgres-history.ts'
import { writeClosingFiles } from '../load/run-folder.ts'
import type { FinishedRun } from '../load/run-load.ts'
import { runFileTexts } from '../report/run-files.ts'
import { invalidRun } from '../slo/evaluate-slo.ts'
import type { BenchSummary } from '../summarise/bench-run.ts'

/**
 * What a finished run is told to, in order: each reads the run and writes or says its part. A new output is a
 * function here and a line in RUN_OUTPUTS; the load engine below knows none of them.
 */
export interface RunOutput {
  /** Problems with this output's own options, each "`option`: expected …, got …", before anything runs. */
  problems?: (opts: ValidatedOptions) => string[]
  /** Throws an ArtifactWriteError, its `run` set, when what it writes cannot be written. */
  finished: (run: FinishedRun) => Promise<void> | void
}

/** summary.json and report.html; a file the load could not write (requests.csv) is said here, with the run. */
export const runFiles: RunOutput = {
  finished: ({ run, dir, series, failures }) => {
    const failure = writeClosingFiles(runFileTexts(dir, run.table, run.summary, series), failures)
    if (failure === undefined) return
    // the rows are whole in memory: the caller still gets them, with the file that could not be written
    failure.run = run
    throw failure
  },
}

/** A valid run joins the history where the options ask (an invalid one says nothing about the server). */
export const history: RunOutput = {
  problems: (opts) => {
    const db = typeof opts.history === 'object' ? opts.history.db : undefined
    const problem = db !== undefined && isPostgresUrl(db) ? databaseUrlProblem(db) : undefined
    return problem === undefined ? [] : [`\`history.db\`: ${problem}`]
  },
  finished: async ({ run, dir, opts }) => {
    if (opts.history === false || invalidRun(run.summary) !== undefined) return
    try {
      await recordRun(
        { dir, summary: run.summary, table: run.table },
        opts.history === true ? {} : opts.history,
        gitLabels,
      )
    } catch (err) {
      const e = new ArtifactWriteError(historyDbOf(opts.history), err)
      e.run = run
      throw e
    }
  },
}

/** The run in one line on stderr, for a script: what was sent, what came back, the headline latencies. */
export const resultLine: RunOutput = {
  finished: ({ run, dir, opts }) => {
    if (!opts.quiet) process.stderr.write(redact(`${lineOf(run.summary)} → ${dir}\n`))
  },
}

function lineOf(s: BenchSummary): string {
  const ttft = s.metrics.ttft ?? s.metrics.client_ttft
  const name = s.metrics.ttft === undefined ? 'client_ttft' : 'ttft'
  const ms = (v: number | undefined): string => (v === undefined ? '—' : `${v.toFixed(1)} ms`)
  return (
    `vitest-llm-perf: ${s.requests} requests, ${(s.success_rate * 100).toFixed(1)} % ok, ` +
    `${name} p50 ${ms(ttft?.p50)} p99 ${ms(ttft?.p99)}, ${s.request_throughput.toFixed(2)} req/s, ` +
    `${s.output_token_throughput === null ? '—' : s.output_token_throughput.toFixed(0)} output tok/s`
  )
}

/** Every run's outputs, in the order they are told. */
export const RUN_OUTPUTS: readonly RunOutput[] = [runFiles, history, resultLine]
