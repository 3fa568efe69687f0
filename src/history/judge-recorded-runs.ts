import { checkHistory } from './check-history.ts'
import { checkLines } from './check-lines.ts'
import { openHistory } from './open-history.ts'

/**
 * What `history check` says of the series the runs just recorded joined, each judged as `history check` judges it
 * (the newest runs against their regime, then the change points): `run --history` and `sweep --history` print it and
 * fail on a regression, so a CI that records a run is gated by it in the same step. A run the history left out (an
 * invalid one) is in no series: nothing is said of it here, its own line says why.
 */
export async function judgeRecordedRuns(
  dirs: readonly string[],
  history: { db?: string | undefined },
): Promise<{ lines: string[]; regression: boolean }> {
  const store = await openHistory(history.db, { readOnly: true })
  try {
    const checks = dirs.map((run) => checkHistory(store, { run }))
    return {
      lines: checks.flatMap(checkLines),
      regression: checks.some((c) => c.regressions.length > 0),
    }
  } finally {
    await store.close()
  }
}
