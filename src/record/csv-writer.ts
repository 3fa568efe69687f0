import { once } from 'node:events'
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs'
import { dirname } from 'node:path'
import { type Stringifier, stringify } from 'csv-stringify'
import { CSV_COLUMNS } from '../common/columns.ts'
import type { RequestRecord } from './request-record.ts'

/** Seconds keep microseconds; more digits would only be clock noise. */
const cell = (value: unknown): string | number | boolean => {
  if (value === undefined || value === null) return ''
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toFixed(6))
  return value as string | boolean
}

/**
 * Appends each record as its request finishes, so an interrupted run leaves every finished row on disk.
 * Booleans are written as `true`/`false`, empty cells mean "not known".
 */
export class CsvWriter {
  readonly path: string
  readonly #out: WriteStream
  readonly #csv: Stringifier

  constructor(path: string) {
    this.path = path
    mkdirSync(dirname(path), { recursive: true })
    this.#out = createWriteStream(path)
    this.#csv = stringify({ header: true, columns: [...CSV_COLUMNS], cast: { boolean: (b) => String(b) } })
    // rows that finish in the same tick reach the file in one write
    this.#csv.on('data', () => {
      if (this.#out.writableCorked === 0) {
        this.#out.cork()
        process.nextTick(() => this.#out.uncork())
      }
    })
    this.#csv.pipe(this.#out)
  }

  write(record: RequestRecord): void {
    this.#csv.write(CSV_COLUMNS.map((column) => cell(record[column])))
  }

  async close(): Promise<void> {
    this.#csv.end()
    await once(this.#out, 'close')
  }
}
