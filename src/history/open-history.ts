import { InvalidOptionError, LlmPerfError } from '../common/errors.ts'
import { databaseUrlProblem, maskedUrl, urlPassword } from '../common/masked-url.ts'
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
    try {
      return await PostgresHistory.open(db)
    } catch (err) {
      throw cannotOpen(maskedUrl(db), err)
    }
  }
  let store: HistoryStore
  try {
    store = new HistoryStore(db)
  } catch (err) {
    throw cannotOpen(db, err)
  }
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

/**
 * A history that cannot be opened, said with the database and the driver's words and a code (a garbage file, a
 * folder, a wrong password, a refused connection were raw stack traces naming no database).
 */
function cannotOpen(where: string, err: unknown): LlmPerfError {
  const e = err as { code?: string; message?: string }
  return new LlmPerfError(
    'LLMPERF_HISTORY',
    `cannot open the history at ${where}: ${e.code === undefined ? '' : `${e.code} `}${e.message ?? String(err)}`,
    { cause: err },
  )
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
