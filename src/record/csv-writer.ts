import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { stringify } from 'csv-stringify/sync'
import { CSV_COLUMNS } from '../common/columns.ts'
import type { RequestRecord } from './request-record.ts'

/** Seconds keep microseconds; more digits would only be clock noise. */
const cell = (value: unknown): string | number | boolean => {
  if (value === undefined || value === null) return ''
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toFixed(6))
  return value as string | boolean
}

const OPTIONS = { cast: { boolean: (b: boolean) => String(b) } }

/**
 * Appends rows as their requests finish, so an interrupted run leaves every finished row on disk. Each batch is
 * one synchronous write: its text is garbage at once, never buffered behind the disk (the timing happens in the
 * load threads, not here). Booleans are written as `true`/`false`, empty cells mean "not known".
 */
export class CsvWriter {
  readonly path: string
  #fd: number | undefined

  constructor(path: string) {
    this.path = path
    mkdirSync(dirname(path), { recursive: true })
    this.#fd = openSync(path, 'w')
    writeSync(this.#fd, stringify([[...CSV_COLUMNS]]))
  }

  writeAll(records: readonly RequestRecord[]): void {
    if (records.length === 0 || this.#fd === undefined) return
    writeSync(
      this.#fd,
      stringify(
        records.map((r) => CSV_COLUMNS.map((column) => cell(r[column]))),
        OPTIONS,
      ),
    )
  }

  async close(): Promise<void> {
    if (this.#fd !== undefined) closeSync(this.#fd)
    this.#fd = undefined
  }
}
