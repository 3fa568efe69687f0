import postgres from 'postgres'
import { maskedUrl } from '../common/masked-url.ts'
import type { RecordTable } from '../record/record-table.ts'
import type { BenchSummary } from '../summarise/bench-run.ts'
import { type HistoryDb, historyRow, historyTables, type RecordedRun, recordedRun, samplesOf } from './history-store.ts'

/** Our tables live in a schema of their own, so a shared database's other tables are never in the way. */
const SCHEMA = 'llm_perf'
/** Migrations run under this advisory lock: two CI jobs opening a new database at once migrate it once. */
const MIGRATION_LOCK = 0x6c6c6d70

/** The SQLite store's tables (history-store.ts), in PostgreSQL's types; applied in order, once each. */
const MIGRATIONS = [historyTables(`${SCHEMA}.`, 'DOUBLE PRECISION', 'BYTEA')]

/** Whether `db` names a PostgreSQL database rather than a SQLite file. */
export const isPostgresUrl = (db: string): boolean => /^postgres(ql)?:\/\//iu.test(db)

/**
 * The history in PostgreSQL, shared by CI runners: the SQLite store's tables in schema `llm_perf`, versioned
 * migrations (run once, under an advisory lock), one transaction a run, and a run recorded twice is one run
 * (INSERT … ON CONFLICT DO NOTHING on its key). What the checks read is loaded when it is opened.
 */
export class PostgresHistory implements HistoryDb {
  readonly path: string
  readonly #sql: postgres.Sql
  #runs: RecordedRun[] = []
  #metrics = new Map<string, Map<string, number>>()
  #options = new Map<string, Record<string, unknown>>()

  private constructor(url: string) {
    this.path = maskedUrl(url)
    this.#sql = postgres(url, { max: 1, onnotice: () => undefined, connect_timeout: 30, idle_timeout: 5 })
  }

  static async open(url: string): Promise<PostgresHistory> {
    const store = new PostgresHistory(url)
    try {
      await store.#migrate()
      await store.#load()
      return store
    } catch (err) {
      await store.close()
      throw err
    }
  }

  async #migrate(): Promise<void> {
    // a schema already up to date is only read: a reader's role without CREATE on the database can judge it
    const current = await this.#sql
      .unsafe(`SELECT max(version) AS v FROM ${SCHEMA}.schema_version`)
      .then(([row]) => Number(row?.['v'] ?? 0))
      .catch(() => 0)
    if (current >= MIGRATIONS.length) return
    await this.#sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
      await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`)
      await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.schema_version (version INTEGER NOT NULL)`)
      const [row] = await tx.unsafe(`SELECT max(version) AS v FROM ${SCHEMA}.schema_version`)
      const at = Number(row?.['v'] ?? 0)
      for (let v = at; v < MIGRATIONS.length; v++) await tx.unsafe(MIGRATIONS[v] as string)
      if (at < MIGRATIONS.length)
        await tx.unsafe(`INSERT INTO ${SCHEMA}.schema_version (version) VALUES (${MIGRATIONS.length})`)
    })
  }

  async #load(): Promise<void> {
    const runs = await this.#sql.unsafe(
      `SELECT key, dir, started_at, fingerprint, environment, labels, summary::json -> 'options' AS options
       FROM ${SCHEMA}.runs ORDER BY recorded_at, key`,
    )
    this.#runs = runs.map((r) => recordedRun(r))
    this.#options = new Map(runs.map((r) => [r['key'] as string, (r['options'] ?? {}) as Record<string, unknown>]))
    this.#metrics = new Map()
    for (const m of await this.#sql.unsafe(`SELECT run_key, name, value FROM ${SCHEMA}.metrics`)) {
      const key = m['run_key'] as string
      const of = this.#metrics.get(key) ?? new Map<string, number>()
      of.set(m['name'] as string, Number(m['value']))
      this.#metrics.set(key, of)
    }
  }

  runs(): RecordedRun[] {
    return [...this.#runs]
  }

  metric(name: string, runs: readonly RecordedRun[]): Array<number | undefined> {
    return runs.map((r) => this.#metrics.get(r.key)?.get(name))
  }

  options(run: RecordedRun): Record<string, unknown> | undefined {
    return this.#options.get(run.key)
  }

  async record(
    f: { dir: string; summary: BenchSummary; table: RecordTable },
    labels: Record<string, string>,
  ): Promise<boolean> {
    const row = historyRow(f, labels)
    return await this.#sql.begin(async (tx) => {
      const inserted = await tx.unsafe(
        `INSERT INTO ${SCHEMA}.runs (key, dir, recorded_at, started_at, fingerprint, environment, labels, summary)
         VALUES ($1, $2, to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), $3, $4, $5,
           $6, $7) ON CONFLICT (key) DO NOTHING RETURNING key`,
        // recorded_at is the database's clock: runners' clocks disagree, and the series is in the order recorded
        [row.key, row.dir, row.startedAt, row.fingerprint, row.environment, row.labels, row.summary],
      )
      if (inserted.length === 0) return false
      for (const [name, value] of row.metrics)
        await tx.unsafe(`INSERT INTO ${SCHEMA}.metrics (run_key, name, value) VALUES ($1, $2, $3)`, [
          row.key,
          name,
          value,
        ])
      for (const x of row.samples)
        await tx.unsafe(`INSERT INTO ${SCHEMA}.samples (run_key, field, n, data) VALUES ($1, $2, $3, $4)`, [
          row.key,
          x.field,
          x.n,
          Buffer.from(x.data.buffer, x.data.byteOffset, x.data.byteLength),
        ])
      return true
    })
  }

  async samples(run: RecordedRun, field: string): Promise<Float32Array> {
    const [row] = await this.#sql.unsafe(`SELECT data FROM ${SCHEMA}.samples WHERE run_key = $1 AND field = $2`, [
      run.key,
      field,
    ])
    return samplesOf(row?.['data'] as Uint8Array | undefined)
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 })
  }
}
