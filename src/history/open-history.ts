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
 * `readOnly`: only read, so that a history the reader may not write, or one a writer holds, can be judged.
 */
export async function openHistory(
  db: string = DEFAULT_HISTORY_DB,
  options: { readOnly?: boolean } = {},
): Promise<HistoryDb> {
  if (isPostgresUrl(db)) {
    const problem = databaseUrlProblem(db)
    if (problem !== undefined) throw new InvalidOptionError('history database', [problem])
    addSecrets([urlPassword(db)])
    let store: PostgresHistory
    try {
      store = await PostgresHistory.open(db)
    } catch (err) {
      throw cannotOpen(maskedUrl(db), err)
    }
    return guarded(store)
  }
  let store: HistoryStore
  try {
    store = new HistoryStore(db, options)
  } catch (err) {
    throw cannotOpen(db, err)
  }
  return guarded({
    path: store.path,
    runs: () => store.runs(),
    metric: (name, runs) => store.metric(name, runs),
    options: (run) => store.options(run),
    record: async (run, labels) => store.record(run, labels),
    samples: async (run, field) => store.samples(run, field),
    close: async () => store.close(),
  })
}

/**
 * The store with each failure after it opened (a file truncated mid-way, "database disk image is malformed", a
 * connection lost) said as one LlmPerfError naming the history, not a driver's stack; our own errors pass as they are.
 */
function guarded(store: HistoryDb): HistoryDb {
  const failed = (what: string, err: unknown): unknown =>
    err instanceof LlmPerfError
      ? err
      : new LlmPerfError('LLMPERF_HISTORY', `the history at ${store.path} failed while ${what}: ${driverWords(err)}`, {
          cause: err,
        })
  const sync =
    <A extends unknown[], R>(what: string, f: (...a: A) => R) =>
    (...a: A): R => {
      try {
        return f(...a)
      } catch (err) {
        throw failed(what, err)
      }
    }
  const awaited =
    <A extends unknown[], R>(what: string, f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      try {
        return await f(...a)
      } catch (err) {
        throw failed(what, err)
      }
    }
  return {
    path: store.path,
    runs: sync('reading its runs', () => store.runs()),
    metric: sync('reading a metric', (name: string, runs: Parameters<HistoryDb['metric']>[1]) =>
      store.metric(name, runs),
    ),
    options: sync("reading a run's options", (run: Parameters<HistoryDb['options']>[0]) => store.options(run)),
    record: awaited('recording a run', (run: Parameters<HistoryDb['record']>[0], labels: Record<string, string>) =>
      store.record(run, labels),
    ),
    samples: awaited("reading a run's samples", (run: Parameters<HistoryDb['samples']>[0], field: string) =>
      store.samples(run, field),
    ),
    close: async () => store.close(),
  }
}

/**
 * A history that cannot be opened, said with the database and the driver's words and a code (a garbage file, a
 * folder, a wrong password, a refused connection were raw stack traces naming no database).
 */
function cannotOpen(where: string, err: unknown): LlmPerfError {
  return new LlmPerfError('LLMPERF_HISTORY', `cannot open the history at ${where}: ${driverWords(err)}`, {
    cause: err,
  })
}

/** A database driver's error as it said it: its code (ERR_SQLITE_ERROR, 42501) and its message. */
function driverWords(err: unknown): string {
  const e = err as { code?: string; message?: string }
  return `${e.code === undefined ? '' : `${e.code} `}${e.message ?? String(err)}`
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
