import { stringify } from 'csv-stringify/sync'
import { AppendFile, type ArtifactWriteError, neutralise } from '../common/artifact-file.ts'
import { CSV_COLUMNS } from '../common/columns.ts'
import type { RequestRecord } from './request-record.ts'

/**
 * Seconds keep microseconds; more digits would only be clock noise. Text a server controls is neutralised
 * for spreadsheets (a `host` of `=cmd|…` is written `'=cmd|…`); numbers stay numbers.
 */
export const csvCell = (value: unknown): string | number | boolean => {
  if (value === undefined || value === null) return ''
  // to the nanosecond: every time and duration is already rounded to the microsecond (buildRecord), so it is written
  // as before; a ratio such as seconds per prompt token keeps the digits a microsecond would cut
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toFixed(9))
  if (typeof value === 'string') return neutralise(value)
  return value as boolean
}

const OPTIONS = { cast: { boolean: (b: boolean) => String(b) } }

/**
 * Appends rows as their requests finish, so an interrupted run leaves every finished row on disk. Each batch is
 * one synchronous write of whole rows: its text is garbage at once, never buffered behind the disk (the timing
 * happens in the load threads, not here). Booleans are written as `true`/`false`, empty cells mean "not known".
 * A write that fails (a full disk) cuts the file back to its last whole row and is reported by the run at its
 * end (`failure`); the rows stay in memory.
 */
export class CsvWriter {
  readonly path: string
  readonly #file: AppendFile

  constructor(path: string) {
    this.path = path
    this.#file = new AppendFile(path, stringify([[...CSV_COLUMNS]]))
  }

  get failure(): ArtifactWriteError | undefined {
    return this.#file.failure
  }

  writeAll(records: readonly RequestRecord[]): void {
    if (records.length === 0 || this.#file.failure !== undefined) return
    this.#file.append(
      stringify(
        records.map((r) => CSV_COLUMNS.map((column) => csvCell(r[column]))),
        OPTIONS,
      ),
    )
  }

  async close(): Promise<void> {
    this.#file.close()
  }
}
