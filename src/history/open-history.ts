import { InvalidOptionError } from '../common/errors.ts'
import { databaseUrlProblem, urlPassword } from '../common/masked-url.ts'
import { addSecrets } from '../common/redact.ts'
import type { RecordTable } from '../record/record-table.ts'
import type { BenchSummary } from '../summarise/bench-run.ts'
import { DEFAULT_HISTORY_DB, type HistoryDb, HistoryStore } from './history-store.ts'
import { isPostgresUrl, PostgresHistory } from './postgres-history.ts'

/**
 * The history at `db`: a PostgreSQL database for a `postgres://` URL (shared by CI runners), else a SQLite file
 * (embedded; the default `.vitest/llm-perf/history.sqlite`). Its password is masked wherever it could be printed.
 */
export async function openHistory(db: string = DEFAULT_HISTORY_DB): Promise<HistoryDb> {
  if (isPostgresUrl(db)) {
    const problem = databaseUrlProblem(db)
    if (problem !== undefined) throw new InvalidOptionError('history database', [problem])
    addSecrets([urlPassword(db)])
    return await PostgresHistory.open(db)
  }
  const store = new HistoryStore(db)
  return {
    path: store.path,
    runs: () => store.runs(),
    metric: (name, runs) => store.metric(name, runs),
    options: (run) => store.options(run),
    record: async (run, labels) => store.record(run, labels),
    samples: async (run, field) => store.samples(run, field),
    close: async () => store.close(),
  }
}

/** Records one run into the history at `db`, opening and closing it: what benchRequests and perf tests call. */
export async function recordRun(
  run: { dir: string; summary: BenchSummary; table: RecordTable },
  history: { db?: string | undefined; labels?: Record<string, string> | undefined },
  defaultLabels: () => Record<string, string>,
): Promise<boolean> {
  const store = await openHistory(history.db ?? DEFAULT_HISTORY_DB)
  try {
    return await store.record(run, { ...defaultLabels(), ...(history.labels ?? {}) })
  } finally {
    await store.close()
  }
}
