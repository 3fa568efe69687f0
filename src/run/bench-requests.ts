import { addSecrets, redactError } from '../common/redact.ts'
import type { BenchOptions } from '../executors/bench-options-schema.ts'
import type { BenchTarget } from '../load/bench-target.ts'
import { optionSecrets, planRun, runLoad, summariseLoad } from '../load/run-load.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { RUN_OUTPUTS } from './run-outputs.ts'

/**
 * Drives load at `target` and records one row per request: plan → load → summarise, then the outputs (the run's
 * files, the history, the line on stderr) told of the finished run in turn. Options are validated before any
 * socket opens (each output's own among them); a failing server becomes failed rows, never an exception. A file
 * that cannot be written ends the run with an `ArtifactWriteError` naming it, its `run` holding every row. Every
 * error is redacted.
 */
export async function benchRequests(target: BenchTarget, options: BenchOptions): Promise<BenchRun> {
  addSecrets(optionSecrets(options))
  try {
    const planned = await planRun(target, options, (opts) => RUN_OUTPUTS.flatMap((o) => o.problems?.(opts) ?? []))
    const finished = summariseLoad(planned, await runLoad(planned))
    for (const output of RUN_OUTPUTS) await output.finished(finished)
    return finished.run
  } catch (err) {
    throw redactError(err)
  }
}
