import { AppendFile, type ArtifactWriteError, neutralise } from '../common/artifact-file.ts'
import { CSV_COLUMNS } from '../common/columns.ts'
import type { RequestRecord } from './request-record.ts'

/** A cell that RFC 4180 says must be quoted: it holds the delimiter, a quote or a line break. */
const NEEDS_QUOTES = /[",\n\r]/

/**
 * One cell of requests.csv, as csv-stringify writes it with our options (its test holds the two equal): empty for
 * unknown; seconds keep microseconds, more digits would only be clock noise; text a server controls is neutralised
 * for spreadsheets (a `host` of `=cmd|…` is written `'=cmd|…`); booleans `true`/`false`.
 */
export const csvCell = (value: unknown): string => {
  if (value === undefined || value === null) return ''
  // to the nanosecond: every time and duration is already rounded to the microsecond (buildRecord), so it is written
  // as before; a ratio such as seconds per prompt token keeps the digits a microsecond would cut
  if (typeof value === 'number') return String(Number.isInteger(value) ? value : Number(value.toFixed(9)))
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  const text = neutralise(String(value))
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** Rows as requests.csv's lines, each ended by a newline. */
export function csvLines(records: readonly RequestRecord[]): string {
  let out = ''
  for (const r of records) {
    let line = ''
    for (let c = 0; c < CSV_COLUMNS.length; c++) {
      if (c > 0) line += ','
      line += csvCell(r[CSV_COLUMNS[c] as (typeof CSV_COLUMNS)[number]])
    }
    out += `${line}\n`
  }
  return out
}

/**
 * Appends rows as their requests finish, so an interrupted run leaves every finished row on disk. Each batch is
 * one synchronous write of whole rows: its text is garbage at once, never buffered behind the disk (the timing
 * happens in the load threads, not here). Empty cells mean "not known". The cells are formatted here, not by
 * csv-stringify: its sync API allocated ~35 KB a row (a context object and a pair per cell), 700 MB in a 20,000-
 * request run, which doubled the coordinator's young generation and its peak RSS with it. A write that fails (a
 * full disk) cuts the file back to its last whole row and is reported by the run at its end (`failure`); the rows
 * stay in memory.
 */
export class CsvWriter {
  readonly path: string
  readonly #file: AppendFile

  constructor(path: string) {
    this.path = path
    this.#file = new AppendFile(path, `${CSV_COLUMNS.map(csvCell).join(',')}\n`)
  }

  get failure(): ArtifactWriteError | undefined {
    return this.#file.failure
  }

  writeAll(records: readonly RequestRecord[]): void {
    if (records.length === 0 || this.#file.failure !== undefined) return
    this.#file.append(csvLines(records))
  }

  async close(): Promise<void> {
    this.#file.close()
  }
}
