import { CSV_COLUMNS, NUMERIC_COLUMNS, type NumericColumn } from '../common/columns.ts'
import type { RequestRecord } from './request-record.ts'

/** Text columns with a handful of distinct values, kept as small codes into one dictionary each. */
const CODED = ['host', 'finish_reason', 'error_type', 'server_timestamps'] as const
/** Text columns set on few rows (failures, warnings): kept by row, only where set. */
const SPARSE = ['error', 'warning'] as const
const FLAGS = ['success', 'has_generated_text'] as const

type Coded = (typeof CODED)[number]
type Sparse = (typeof SPARSE)[number]
type Flag = (typeof FLAGS)[number]

const INITIAL_ROWS = 1024

/**
 * requests.csv's rows as columns: a Float64Array per numeric column (NaN = unknown, as an empty cell), codes for
 * the few-valued text columns, and only the set cells of error and warning. About 320 bytes a row, where a row
 * kept as an object costs twice that and its strings more: a long run keeps what the summary, the report and
 * the matchers read, not the rows it already wrote.
 */
export class RecordTable {
  #length = 0
  #capacity = 0
  readonly #numbers = new Map<NumericColumn, Float64Array>()
  readonly #flags = new Map<Flag, Uint8Array>()
  readonly #codes = new Map<Coded, Uint16Array>()
  readonly #dictionaries = new Map<
    Coded,
    { values: Array<string | undefined>; index: Map<string | undefined, number> }
  >()
  readonly #sparse = new Map<Sparse, Map<number, string>>()
  #ids: string[] = []

  constructor() {
    for (const c of CODED) this.#dictionaries.set(c, { values: [undefined], index: new Map([[undefined, 0]]) })
    for (const c of SPARSE) this.#sparse.set(c, new Map())
    this.#grow(INITIAL_ROWS)
  }

  static of(records: Iterable<RequestRecord>): RecordTable {
    const table = new RecordTable()
    for (const r of records) table.append(r)
    return table
  }

  get length(): number {
    return this.#length
  }

  append(r: RequestRecord): void {
    if (this.#length === this.#capacity) this.#grow(this.#capacity * 2)
    const i = this.#length++
    for (const [c, column] of this.#numbers) column[i] = r[c] ?? Number.NaN
    for (const [c, column] of this.#flags) column[i] = r[c] ? 1 : 0
    for (const [c, column] of this.#codes) column[i] = this.#code(c, r[c])
    for (const [c, cells] of this.#sparse) {
      const v = r[c]
      if (v !== undefined) cells.set(i, v)
    }
    this.#ids.push(r.req_id)
  }

  /** A numeric column, NaN where unknown: a view valid until the next append. */
  numbers(column: NumericColumn): Float64Array {
    return (this.#numbers.get(column) as Float64Array).subarray(0, this.#length)
  }

  success(i: number): boolean {
    return (this.#flags.get('success') as Uint8Array)[i] === 1
  }

  /** The rows that succeeded. */
  successes(): number {
    let n = 0
    const ok = this.#flags.get('success') as Uint8Array
    for (let i = 0; i < this.#length; i++) n += ok[i] as number
    return n
  }

  /**
   * A numeric column's known values (of successful rows only, unless `all`), times `scale`, in row order.
   */
  known(column: NumericColumn, options: { all?: boolean; scale?: number } = {}): number[] {
    const values = this.numbers(column)
    const ok = this.#flags.get('success') as Uint8Array
    const scale = options.scale ?? 1
    const out: number[] = []
    for (let i = 0; i < values.length; i++) {
      const v = values[i] as number
      if (!Number.isNaN(v) && (options.all === true || ok[i] === 1)) out.push(scale === 1 ? v : v * scale)
    }
    return out
  }

  /** How many rows have each value of a text column (unset cells not counted). */
  counts(column: Coded): Record<string, number> {
    const codes = this.#codes.get(column) as Uint16Array
    const { values } = this.#dictionaries.get(column) as { values: Array<string | undefined> }
    const tally = new Float64Array(values.length)
    for (let i = 0; i < this.#length; i++) tally[codes[i] as number] = (tally[codes[i] as number] as number) + 1
    const out: Record<string, number> = {}
    values.forEach((v, code) => {
      if (v !== undefined && (tally[code] as number) > 0) out[v] = tally[code] as number
    })
    return out
  }

  text(column: Coded | Sparse | 'req_id', i: number): string | undefined {
    if (column === 'req_id') return this.#ids[i]
    if (column === 'error' || column === 'warning') return this.#sparse.get(column)?.get(i)
    return this.#dictionaries.get(column)?.values[(this.#codes.get(column) as Uint16Array)[i] as number]
  }

  /** Row `i` as the record it was. */
  record(i: number): RequestRecord {
    const out: Record<string, unknown> = {}
    for (const c of CSV_COLUMNS) out[c] = undefined
    for (const [c, column] of this.#numbers) {
      const v = column[i] as number
      out[c] = Number.isNaN(v) ? undefined : v
    }
    for (const [c, column] of this.#flags) out[c] = column[i] === 1
    for (const c of CODED) out[c] = this.text(c, i)
    for (const c of SPARSE) out[c] = this.text(c, i)
    out['req_id'] = this.#ids[i]
    return out as unknown as RequestRecord
  }

  /** Every row as a record, in the order they were appended (made on each call: hold it only while needed). */
  records(): RequestRecord[] {
    return Array.from({ length: this.#length }, (_, i) => this.record(i))
  }

  #code(column: Coded, value: string | undefined): number {
    const dict = this.#dictionaries.get(column) as {
      values: Array<string | undefined>
      index: Map<string | undefined, number>
    }
    let code = dict.index.get(value)
    if (code === undefined) {
      code = dict.values.length
      if (code > 0xffff) throw new RangeError(`more than 65,535 distinct values of ${column}`)
      dict.values.push(value)
      dict.index.set(value, code)
    }
    return code
  }

  #grow(capacity: number): void {
    const copy = <T extends Float64Array | Uint8Array | Uint16Array>(old: T | undefined, made: T): T => {
      if (old !== undefined) made.set(old)
      return made
    }
    for (const c of NUMERIC_COLUMNS) {
      const made = copy(this.#numbers.get(c), new Float64Array(capacity))
      made.fill(Number.NaN, this.#capacity)
      this.#numbers.set(c, made)
    }
    for (const c of FLAGS) this.#flags.set(c, copy(this.#flags.get(c), new Uint8Array(capacity)))
    for (const c of CODED) this.#codes.set(c, copy(this.#codes.get(c), new Uint16Array(capacity)))
    this.#capacity = capacity
  }
}
