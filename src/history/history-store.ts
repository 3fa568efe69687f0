import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { closest, distance } from 'fastest-levenshtein'
import { DURATION_COLUMNS, MS_PER_S, type NumericColumn } from '../common/columns.ts'
import { LlmPerfError } from '../common/errors.ts'
import { SAMPLED_METRICS } from '../common/metric-registry.ts'
import { redactDeep } from '../common/redact.ts'
import type { RecordTable } from '../record/record-table.ts'
import type { BenchSummary } from '../summarise/bench-run.ts'
import { SERIES_WORKLOAD } from '../summarise/workload-differences.ts'

/** How long a writer waits for another to let go of the file. */
const BUSY_TIMEOUT_MS = 30_000

/** Where a project's history lives unless `--db` says otherwise. */
export const DEFAULT_HISTORY_DB = '.vitest/llm-perf/history.sqlite'

/** The percentiles kept of every duration metric, as `ttft.p99`; and the run's own figures. */
const PERCENTILES = ['p50', 'p90', 'p95', 'p99', 'mean'] as const
const FIGURES = ['request_throughput', 'output_token_throughput', 'success_rate'] as const

/** Every figure the history stores, as `history check --metric` names it: what can be judged, and nothing else. */
export const RECORDED_METRICS: readonly string[] = [
  ...DURATION_COLUMNS.flatMap((c) => PERCENTILES.map((p) => `${c}.${p}`)),
  ...FIGURES,
  'goodput',
]

/**
 * Why each of `metrics` can never be judged (the history records no such figure, so its gate would pass forever),
 * with the recorded one it most likely meant.
 */
export function unknownMetrics(metrics: readonly string[]): string[] {
  return metrics
    .filter((m) => !RECORDED_METRICS.includes(m))
    .map((m) => {
      const near = closest(m.toLowerCase(), [...RECORDED_METRICS])
      const hint = distance(m.toLowerCase(), near) <= 3 ? ` (did you mean ${near}?)` : ''
      return (
        `--metric: the history records no ${JSON.stringify(m)}${hint}; it records the percentiles ` +
        `${PERCENTILES.join(', ')} of ${DURATION_COLUMNS.join(', ')}, and ${[...FIGURES, 'goodput'].join(', ')}`
      )
    })
}
/** Per successful request, kept whole so any percentile and its interval can be recomputed later. */
const SAMPLED = SAMPLED_METRICS as readonly NumericColumn[]

/**
 * The history's tables, in either database: `schema` is a prefix for table names (PostgreSQL keeps them in a schema
 * of their own), `real` and `blob` the database's names for those types.
 */
export function historyTables(schema: string, real: string, blob: string): string {
  return `CREATE TABLE ${schema}runs (
     key TEXT PRIMARY KEY,
     dir TEXT NOT NULL,
     recorded_at TEXT NOT NULL,
     started_at TEXT NOT NULL,
     fingerprint TEXT NOT NULL,
     environment TEXT NOT NULL,
     labels TEXT NOT NULL,
     summary TEXT NOT NULL
   );
   CREATE INDEX runs_by_workload ON ${schema}runs (fingerprint, started_at);
   CREATE TABLE ${schema}metrics (run_key TEXT NOT NULL REFERENCES ${schema}runs (key), name TEXT NOT NULL,
     value ${real} NOT NULL, PRIMARY KEY (run_key, name));
   CREATE TABLE ${schema}samples (run_key TEXT NOT NULL REFERENCES ${schema}runs (key), field TEXT NOT NULL,
     n INTEGER NOT NULL, data ${blob} NOT NULL, PRIMARY KEY (run_key, field));`
}

/**
 * Versioned migrations, applied in order once each (SQLite's user_version counts them): a store made by an older
 * version is brought forward, never rebuilt. PostgreSQL's store (postgres-history.ts) has the same tables.
 */
const MIGRATIONS = [historyTables('', 'REAL', 'BLOB')]

export interface RecordedRun {
  key: string
  dir: string
  startedAt: string
  fingerprint: string
  environment: Record<string, unknown>
  labels: Record<string, string>
}

/** What the checks and the report read of a history, whichever database holds it. */
export interface HistoryView {
  /** Where it is, for messages (a PostgreSQL URL without its password). */
  readonly path: string
  /** Every recorded run, in the order the store recorded them (the store's clock, not the runs'). */
  runs(): RecordedRun[]
  /** One metric of each given run (undefined where the run did not report it). */
  metric(name: string, runs: readonly RecordedRun[]): Array<number | undefined>
  /** A run's options as its summary.json recorded them. */
  options(run: RecordedRun): Record<string, unknown> | undefined
}

/** A history to record into and read: SQLite's or PostgreSQL's (open-history.ts opens either). */
export interface HistoryDb extends HistoryView {
  /** Records a run (its folder, summary and rows); false when it was recorded before (nothing is written twice). */
  record(
    run: { dir: string; summary: BenchSummary; table: RecordTable },
    labels: Record<string, string>,
  ): Promise<boolean>
  /** A run's per-request samples of a field (ms), as recorded. */
  samples(run: RecordedRun, field: string): Promise<Float32Array>
  close(): Promise<void>
}

/** A run as the history's tables hold it: one row of runs, its metrics, its per-request samples. */
export interface HistoryRow {
  key: string
  dir: string
  startedAt: string
  fingerprint: string
  environment: string
  labels: string
  summary: string
  metrics: Array<[string, number]>
  samples: Array<{ field: string; n: number; data: Uint8Array }>
}

/** The database a `history` option names: its `db`, or the default file. */
export const historyDbOf = (history: true | { db?: string | undefined }): string =>
  history === true || history.db === undefined ? DEFAULT_HISTORY_DB : history.db

const IMPOSSIBLE = 1e12
/**
 * Text as PostgreSQL's json takes it: a lone surrogate (a server's `model_path` of `\ud800`) is written by
 * JSON.stringify as an escape PostgreSQL refuses, and one such row made every later read of a shared history fail.
 */
const wellFormed = (_key: string, v: unknown): unknown => (typeof v === 'string' ? v.toWellFormed() : v)

/** The rows a run becomes in either database. */
export function historyRow(
  f: { dir: string; summary: BenchSummary; table: RecordTable },
  labels: Record<string, string>,
): HistoryRow {
  const s = f.summary
  const metrics: Array<[string, number]> = []
  for (const c of DURATION_COLUMNS) {
    const d = s.metrics[c]
    if (d === undefined) continue
    for (const p of PERCENTILES) metrics.push([`${c}.${p}`, d[p]])
  }
  for (const k of FIGURES) {
    const v = s[k]
    if (typeof v === 'number') metrics.push([k, v])
  }
  if (s.goodput !== null && s.goodput !== undefined) metrics.push(['goodput', s.goodput.fraction])
  // a duration, a rate or a fraction is never negative, and none comes near 1e12 (a hand-edited 1e308 overflowed the
  // change-point search's sums to NaN and made a change every third run): refused, naming each
  const impossible = metrics.filter(([, v]) => Number.isFinite(v) && (v < 0 || v >= IMPOSSIBLE))
  if (impossible.length > 0)
    throw new LlmPerfError(
      'LLMPERF_HISTORY_VALUE',
      `${f.dir}: not recorded, its summary holds what no run measures: ` +
        `${impossible.map(([k, v]) => `${k} = ${v}`).join(', ')} (expected a value ≥ 0 and below 1e12)`,
    )
  const samples: HistoryRow['samples'] = []
  for (const field of SAMPLED) {
    const values = Float32Array.from(f.table.known(field, { scale: MS_PER_S }))
    if (values.length > 0) samples.push({ field, n: values.length, data: new Uint8Array(values.buffer) })
  }
  return {
    key: runKey(s),
    dir: f.dir,
    startedAt: s.started_at,
    fingerprint: workloadFingerprint(s.options),
    environment: JSON.stringify(environmentOf(s), wellFormed),
    labels: JSON.stringify(labels, wellFormed),
    // a database is a file too: what summary.json would mask is masked here (a key echoed in an option's text)
    summary: JSON.stringify(redactDeep({ ...s, ttft_source: s.ttft_source ?? null }), wellFormed),
    metrics: metrics.filter(([, v]) => Number.isFinite(v)),
    samples,
  }
}

/** A recorded run from its stored columns. */
export function recordedRun(r: Record<string, unknown>): RecordedRun {
  return {
    key: r['key'] as string,
    dir: r['dir'] as string,
    startedAt: r['started_at'] as string,
    fingerprint: r['fingerprint'] as string,
    environment: JSON.parse(r['environment'] as string) as Record<string, unknown>,
    labels: JSON.parse(r['labels'] as string) as Record<string, string>,
  }
}

/** Float32 samples from their stored bytes (copied: a driver's buffer may be a view into a larger one). */
export function samplesOf(data: Uint8Array | undefined): Float32Array {
  if (data === undefined) return new Float32Array(0)
  const copy = new Uint8Array(data)
  return new Float32Array(copy.buffer, 0, copy.byteLength / 4)
}

/**
 * A run's workload, hashed: the options that make two runs the same experiment (dataset, lengths, arrival, rate,
 * requests, seed, api, concurrency). The prompt nonce is not among them: it makes each run's prompts new on purpose.
 * A shard is its own series: host 1 of 2 sends other requests than host 0, at half the rate.
 */
export function workloadFingerprint(options: Record<string, unknown>): string {
  const picked: Record<string, unknown> = Object.fromEntries(SERIES_WORKLOAD.map((k) => [k, options[k] ?? null]))
  // only where there is one: an unsharded run's fingerprint is the one it was recorded under
  if (options['shard'] != null) picked['shard'] = options['shard']
  // the same prompts every run (`promptNonce: false`) meet a warm prefix cache from the second run on: another
  // workload than new prompts each run
  if (options['promptNonce'] === false) picked['prompts'] = 'repeated'
  return createHash('sha256').update(JSON.stringify(picked)).digest('hex').slice(0, 12)
}

/** What the run ran on, as far as it knows: package, server version and model, target. */
export function environmentOf(summary: BenchSummary): Record<string, unknown> {
  const info = (summary.server_info ?? {}) as Record<string, unknown>
  return {
    package_version: summary.package_version,
    server_version: info['version'] ?? null,
    server: info['model_path'] ?? info['model'] ?? null,
    target: summary.target,
  }
}

/** A figure of a run's summary as the history names it: `ttft.p99`, `tpot.mean`, `output_token_throughput`. */
export function metricOf(summary: BenchSummary, name: string): number | undefined {
  const dot = name.lastIndexOf('.')
  if (dot > 0) {
    const d = summary.metrics[name.slice(0, dot) as keyof BenchSummary['metrics']] as Record<string, number> | undefined
    const v = d?.[name.slice(dot + 1)]
    return typeof v === 'number' && Number.isFinite(v) ? v : undefined
  }
  if (name === 'goodput') return summary.goodput?.fraction ?? undefined
  const v = (summary as unknown as Record<string, unknown>)[name]
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined
}

/**
 * A run's identity in the history: its start and target (the same run recorded twice is one run), and its shard:
 * the shards of one run share its start, and the second host's rows were dropped as "already there".
 */
export function runKey(s: BenchSummary): string {
  const key: unknown[] = [s.load.start_epoch_ms, s.target, s.requests, s.seed, s.name ?? null]
  // only where there is one, so that an unsharded run keeps the key it was recorded under
  if (s.load.shard != null) key.push(`shard ${s.load.shard.index}/${s.load.shard.count}`)
  return createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 16)
}

/**
 * Comparable environments: the same server version and model (another package version or host does not split a
 * series; another model is another server: a smaller model's faster TPOT read as an improvement, a larger's as a
 * regression).
 */
export const environmentKey = (env: Record<string, unknown>): string =>
  JSON.stringify([env['server_version'] ?? null, env['server'] ?? null])

/**
 * The history of runs in SQLite (Node's own node:sqlite, no dependency): every run's figures, per-request samples,
 * workload fingerprint, environment and labels. Writers in parallel (CI shards, jobs) are safe: WAL, a busy timeout,
 * and one transaction a run; a run recorded twice is one run (its key is its start and target).
 */
export class HistoryStore implements HistoryView {
  readonly path: string
  readonly #db: DatabaseSync

  /**
   * `readOnly` opens an existing file only to read it, writing nothing: `history check` on a history it may not
   * write, or while a writer holds it (the migration's write lock waited 30 s for a long record, then failed). A file
   * of an older schema is still opened to be upgraded, once.
   */
  constructor(path: string = DEFAULT_HISTORY_DB, options: { readOnly?: boolean } = {}) {
    this.path = resolve(path)
    if (options.readOnly === true) {
      const db = new DatabaseSync(this.path, { timeout: BUSY_TIMEOUT_MS, readOnly: true })
      if (HistoryStore.#version(db) >= MIGRATIONS.length) {
        this.#db = db
        return
      }
      db.close()
    }
    mkdirSync(dirname(this.path), { recursive: true })
    this.#db = new DatabaseSync(this.path, { timeout: BUSY_TIMEOUT_MS })
    this.#useWal()
    this.#db.exec('PRAGMA foreign_keys = ON')
    this.#migrate()
  }

  static #version(db: DatabaseSync): number {
    return (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version
  }

  /**
   * WAL lets readers and a writer work at once. Switching a new file to it needs the file to itself, and SQLite
   * answers "database is locked" at once, without its busy timeout, when another process holds it: two writers
   * starting on a new history did (CI, under load). The switch is retried until the other lets go; a file already
   * in WAL (the mode is kept in the file) is left as it is.
   */
  #useWal(): void {
    const deadline = Date.now() + BUSY_TIMEOUT_MS
    for (;;) {
      try {
        const { journal_mode: mode } = this.#db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }
        if (mode !== 'wal') this.#db.exec('PRAGMA journal_mode = WAL')
        return
      } catch (err) {
        if (!/locked|busy/iu.test((err as Error).message) || Date.now() > deadline) throw err
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10 + Math.random() * 40)
      }
    }
  }

  #migrate(): void {
    this.#db.exec('BEGIN IMMEDIATE')
    try {
      const at = HistoryStore.#version(this.#db)
      for (let v = at; v < MIGRATIONS.length; v++) this.#db.exec(MIGRATIONS[v] as string)
      if (at < MIGRATIONS.length) this.#db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`)
      this.#db.exec('COMMIT')
    } catch (err) {
      this.#db.exec('ROLLBACK')
      throw err
    }
  }

  /** Records a run (its folder, summary and rows); false when it was recorded before (nothing is written twice). */
  record(f: { dir: string; summary: BenchSummary; table: RecordTable }, labels: Record<string, string>): boolean {
    const row = historyRow(f, labels)
    this.#db.exec('BEGIN IMMEDIATE')
    try {
      const inserted = this.#db
        .prepare(
          `INSERT OR IGNORE INTO runs (key, dir, recorded_at, started_at, fingerprint, environment, labels, summary)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          row.key,
          row.dir,
          new Date().toISOString(),
          row.startedAt,
          row.fingerprint,
          row.environment,
          row.labels,
          row.summary,
        )
      if (Number(inserted.changes) === 0) {
        this.#db.exec('COMMIT')
        return false
      }
      const metric = this.#db.prepare('INSERT INTO metrics (run_key, name, value) VALUES (?, ?, ?)')
      for (const [name, value] of row.metrics) metric.run(row.key, name, value)
      const sample = this.#db.prepare('INSERT INTO samples (run_key, field, n, data) VALUES (?, ?, ?, ?)')
      for (const x of row.samples) sample.run(row.key, x.field, x.n, x.data)
      this.#db.exec('COMMIT')
      return true
    } catch (err) {
      this.#db.exec('ROLLBACK')
      throw err
    }
  }

  /** Every recorded run, in the order the store recorded them (the store's clock, not the runs'). */
  runs(): RecordedRun[] {
    const rows = this.#db
      // in the order the store recorded them, not by each run's own clock: a runner whose clock is behind would
      // sort its runs into the middle of the series, where a regression they carry hides (started_at stays a field)
      .prepare('SELECT key, dir, started_at, fingerprint, environment, labels FROM runs ORDER BY rowid')
      .all() as Array<Record<string, string>>
    return rows.map(recordedRun)
  }

  /** One metric of each given run (undefined where the run did not report it). */
  metric(name: string, runs: readonly RecordedRun[]): Array<number | undefined> {
    const get = this.#db.prepare('SELECT value FROM metrics WHERE run_key = ? AND name = ?')
    return runs.map((r) => (get.get(r.key, name) as { value: number } | undefined)?.value)
  }

  /** A run's options as its summary.json recorded them. */
  options(run: RecordedRun): Record<string, unknown> | undefined {
    const row = this.#db.prepare('SELECT summary FROM runs WHERE key = ?').get(run.key) as
      | { summary: string }
      | undefined
    return row === undefined ? undefined : (JSON.parse(row.summary) as { options?: Record<string, unknown> }).options
  }

  /** A run's per-request samples of a field (ms), as recorded. */
  samples(run: RecordedRun, field: string): Float32Array {
    const row = this.#db.prepare('SELECT data FROM samples WHERE run_key = ? AND field = ?').get(run.key, field) as
      | { data: Uint8Array }
      | undefined
    return samplesOf(row?.data)
  }

  close(): void {
    this.#db.close()
  }
}
