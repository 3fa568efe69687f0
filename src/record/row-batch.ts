import { CSV_COLUMNS, NUMERIC_COLUMNS, type NumericColumn } from '../common/columns.ts'
import type { RequestRecord } from './request-record.ts'

/** The two flag columns, one bit each. */
const FLAGS = ['success', 'has_generated_text'] as const
/**
 * requests.csv's text columns: whatever is neither a number nor a flag, so a text column added to columns.ts crosses
 * with the others (a list of its own would drop it to undefined).
 */
const TEXT = CSV_COLUMNS.filter(
  (c) => !(NUMERIC_COLUMNS as readonly string[]).includes(c) && !(FLAGS as readonly string[]).includes(c),
) as ReadonlyArray<Exclude<(typeof CSV_COLUMNS)[number], (typeof NUMERIC_COLUMNS)[number] | (typeof FLAGS)[number]>>
/** A text column of a batch. */
export type BatchTextColumn = (typeof TEXT)[number]
const SUCCESS = 1
const GENERATED = 2
const NUMBER_INDEX = new Map<string, number>(NUMERIC_COLUMNS.map((c, k) => [c, k]))
const TEXT_INDEX = new Map<string, number>(TEXT.map((c, t) => [c, t]))

/**
 * Rows as columns, to cross from a load thread to the coordinator: every numeric column in one Float64Array and the
 * two flags in one Uint8Array, both transferred (their memory moves, nothing is copied), and the text columns as one
 * JSON string: ~410 bytes a row, where a row sent as an object was serialised key by key (1,106 bytes a row of a
 * 16-token run, `v8.serialize`) and rebuilt on the other side. Measured (issue 46, 2,000 vs 20,000 requests at 2,000
 * req/s, median of three): peak RSS growth a request 1.5 and 2.3 KB with it, 1.1 and 2.7 KB without, CPU the same:
 * the peak is how far V8 grows the heaps while requests come and go, not what a row costs to send.
 */
export interface RowBatch {
  length: number
  /** Column k of NUMERIC_COLUMNS at row i is `numbers[k · length + i]`; NaN where unknown. */
  numbers: Float64Array
  /** Bit 0: success; bit 1: has_generated_text. */
  flags: Uint8Array
  /** JSON of TEXT's columns, each an array of its rows' values (null where unset). */
  text: string
  /**
   * The rows as requests.csv's lines (UTF-8, not yet redacted), where the thread that packed them also formatted
   * them (shard-main, `csvLineBytes`): the coordinator then writes bytes, not ~40 strings a row of its own.
   */
  csv?: Uint8Array | undefined
}

export function packRows(rows: readonly RequestRecord[]): RowBatch {
  return packed(rows).batch
}

/** A batch and its text columns as arrays, before they became the batch's JSON. */
function packed(rows: readonly RequestRecord[]): { batch: RowBatch; text: Array<Array<string | null>> } {
  const n = rows.length
  const numbers = new Float64Array(NUMERIC_COLUMNS.length * n)
  const flags = new Uint8Array(n)
  const text = TEXT.map(() => new Array<string | null>(n))
  for (let i = 0; i < n; i++) {
    const r = rows[i] as RequestRecord
    for (let k = 0; k < NUMERIC_COLUMNS.length; k++)
      numbers[k * n + i] =
        (r[NUMERIC_COLUMNS[k] as (typeof NUMERIC_COLUMNS)[number]] as number | undefined) ?? Number.NaN
    flags[i] = (r.success ? SUCCESS : 0) | (r.has_generated_text ? GENERATED : 0)
    for (let t = 0; t < TEXT.length; t++)
      (text[t] as Array<string | null>)[i] = r[TEXT[t] as (typeof TEXT)[number]] ?? null
  }
  return { batch: { length: n, numbers, flags, text: JSON.stringify(text) }, text }
}

/** What postMessage moves instead of copying. */
export function transferOf(batch: RowBatch): ArrayBuffer[] {
  const buffers = [batch.numbers.buffer as ArrayBuffer, batch.flags.buffer as ArrayBuffer]
  if (batch.csv !== undefined) buffers.push(batch.csv.buffer as ArrayBuffer)
  return buffers
}

/**
 * A batch as the coordinator reads it: its columns where they arrived, the text ones parsed once. The CSV, the table
 * and the checks on a run read rows from here; a row becomes an object only where one is asked for (`record`).
 */
export class RowColumns {
  readonly length: number
  /** The batch's requests.csv lines as its thread formatted them (UTF-8, not redacted), if it did. */
  readonly csvLines: Uint8Array | undefined
  readonly #numbers: Float64Array
  readonly #flags: Uint8Array
  readonly #text: Array<Array<string | null>>

  /** `text`: the batch's text columns already parsed, where they were never apart from it (`packed`). */
  constructor(batch: RowBatch, text?: Array<Array<string | null>>) {
    this.length = batch.length
    this.csvLines = batch.csv
    this.#numbers = batch.numbers
    this.#flags = batch.flags
    this.#text = text ?? (batch.length === 0 ? [] : (JSON.parse(batch.text) as Array<Array<string | null>>))
  }

  static of(rows: readonly RequestRecord[]): RowColumns {
    return RowColumns.packed(rows).columns
  }

  /** Rows packed to cross threads, and the same rows read as columns, their text not parsed back from the batch. */
  static packed(rows: readonly RequestRecord[]): { batch: RowBatch; columns: RowColumns } {
    const { batch, text } = packed(rows)
    return { batch, columns: new RowColumns(batch, text) }
  }

  /** The rows of column `c`, NaN where unknown: a view, not a copy. */
  numbers(c: NumericColumn): Float64Array {
    const k = NUMBER_INDEX.get(c) as number
    return this.#numbers.subarray(k * this.length, (k + 1) * this.length)
  }

  success(i: number): boolean {
    return ((this.#flags[i] as number) & SUCCESS) !== 0
  }

  hasGeneratedText(i: number): boolean {
    return ((this.#flags[i] as number) & GENERATED) !== 0
  }

  text(c: BatchTextColumn, i: number): string | undefined {
    return this.texts(c)[i] ?? undefined
  }

  /** The rows of text column `c`, null where unset. */
  texts(c: BatchTextColumn): ReadonlyArray<string | null> {
    return this.#text[TEXT_INDEX.get(c) as number] as Array<string | null>
  }

  /** Row `i` as the record it was. */
  record(i: number): RequestRecord {
    const r: Record<string, unknown> = {}
    for (const c of CSV_COLUMNS) r[c] = undefined
    for (let k = 0; k < NUMERIC_COLUMNS.length; k++) {
      const v = this.#numbers[k * this.length + i] as number
      if (!Number.isNaN(v)) r[NUMERIC_COLUMNS[k] as string] = v
    }
    r['success'] = this.success(i)
    r['has_generated_text'] = this.hasGeneratedText(i)
    for (let t = 0; t < TEXT.length; t++) {
      const v = (this.#text[t] as Array<string | null>)[i]
      if (v !== null && v !== undefined) r[TEXT[t] as string] = v
    }
    return r as unknown as RequestRecord
  }

  records(): RequestRecord[] {
    return Array.from({ length: this.length }, (_, i) => this.record(i))
  }
}
