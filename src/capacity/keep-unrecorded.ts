import { ArtifactWriteError } from '../common/artifact-file.ts'
import { redact } from '../common/redact.ts'
import type { BenchOptions } from '../executors/bench-options-schema.ts'
import { historyDbOf } from '../history/history-store.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import type { BenchFn } from './results.ts'

/**
 * A search's or a sweep's runs, each kept when only its recording in the history failed: the run's own files are
 * written and its rows whole, so the search goes on with it and the failure is said once a run (a PostgreSQL blip
 * mid-search ended an hours-long search, and a sweep after its first point with no sweep.json).
 */
export function keepUnrecorded(bench: BenchFn): BenchFn {
  return async (target, options) => {
    try {
      return await bench(target, options)
    } catch (err) {
      if (!(err instanceof ArtifactWriteError) || err.run === undefined || !isHistory(err.path, options)) throw err
      process.stderr.write(redact(`vitest-llm-perf: this run was not recorded in the history: ${err.message}\n`))
      return err.run as BenchRun
    }
  }
}

function isHistory(path: string, options: BenchOptions): boolean {
  const h = (options as { history?: boolean | { db?: string } }).history
  if (h === undefined || h === false) return false
  return path === historyDbOf(h)
}
