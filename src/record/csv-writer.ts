import { AppendFile, type ArtifactWriteError, neutralise } from '../common/artifact-file.ts'
import { CSV_COLUMNS, NUMERIC_COLUMNS, type NumericColumn } from '../common/columns.ts'
import type { BatchTextColumn, RowColumns } from './row-batch.ts'

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

/** How each of requests.csv's columns is read from a batch's columns, in the file's order. */
type Cell =
  | { kind: 'number'; column: NumericColumn }
  | { kind: 'success' }
  | { kind: 'generated' }
  | { kind: 'text'; column: BatchTextColumn }
const PLAN: Cell[] = CSV_COLUMNS.map((c): Cell => {
  if (c === 'success') return { kind: 'success' }
  if (c === 'has_generated_text') return { kind: 'generated' }
  if ((NUMERIC_COLUMNS as readonly string[]).includes(c)) return { kind: 'number', column: c as NumericColumn }
  return { kind: 'text', column: c as BatchTextColumn }
})

/** A batch's rows as requests.csv's lines, each ended by a newline, read from its columns. */
export function csvColumnLines(rows: RowColumns): string {
  // each column looked up once a batch, not once a cell
  const cellOf = PLAN.map((p): ((i: number) => string) => {
    if (p.kind === 'success') return (i) => (rows.success(i) ? 'true' : 'false')
    if (p.kind === 'generated') return (i) => (rows.hasGeneratedText(i) ? 'true' : 'false')
    if (p.kind === 'text') {
      const texts = rows.texts(p.column)
      return (i) => csvCell(texts[i])
    }
    const numbers = rows.numbers(p.column)
    return (i) => {
      const v = numbers[i] as number
      return Number.isNaN(v) ? '' : csvCell(v)
    }
  })
  // cells into one reused array and joined, lines joined once: a string built by += is a tree of pieces, two a cell
  const lines = new Array<string>(rows.length)
  const cells = new Array<string>(PLAN.length)
  for (let i = 0; i < rows.length; i++) {
    for (let c = 0; c < cellOf.length; c++) cells[c] = (cellOf[c] as (i: number) => string)(i)
    lines[i] = cells.join(',')
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`
}

const utf8 = new TextEncoder()

/**
 * A batch's requests.csv lines as UTF-8, in a buffer of its own (so that it can be transferred): a load thread makes
 * them as it packs its rows, and the coordinator, which holds the whole run's rows and writes them, allocates a Buffer
 * a batch instead of ~40 strings a row (what it allocated in a 20,000-request run: 59 of 171 MB, its young
 * generation's growth with it).
 */
export function csvLineBytes(rows: RowColumns): Uint8Array {
  return utf8.encode(csvColumnLines(rows))
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

  /** A batch of rows, from its columns (rows from the load threads are never made objects). */
  writeColumns(rows: RowColumns): void {
    if (rows.length === 0 || this.#file.failure !== undefined) return
    if (rows.csvLines !== undefined) this.#file.appendBytes(rows.csvLines)
    else this.#file.append(csvColumnLines(rows))
  }

  async close(): Promise<void> {
    this.#file.close()
  }
}
