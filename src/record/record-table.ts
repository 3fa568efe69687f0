import { COUNT_COLUMNS, CSV_COLUMNS, NUMERIC_COLUMNS, type NumericColumn } from '../common/columns.ts'
import type { RequestRecord } from './request-record.ts'
import type { RowColumns } from './row-batch.ts'

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
 * Integer columns are kept as Float32: exact below 2^24, NaN for unknown, half the memory. A column given a value
 * Float32 cannot hold exactly becomes Float64 from then on.
 */
const FLOAT32_COLUMNS = new Set<NumericColumn>(COUNT_COLUMNS)

/** A numeric column's values, NaN where unknown. */
export type NumberColumn = Float64Array | Float32Array

interface Dictionary {
  values: Array<string | undefined>
  index: Map<string | undefined, number>
}

/** The value's code in a dictionary of at most 65,536 values (code 0 = unset), added if new; undefined when full. */
function codeOf(dict: Dictionary, value: string | undefined): number | undefined {
  let code = dict.index.get(value)
  if (code === undefined) {
    if (dict.values.length > 0xffff) return undefined
    code = dict.values.length
    dict.values.push(value)
    dict.index.set(value, code)
  }
  return code
}

/**
 * requests.csv's rows as columns: a Float64Array per numeric column (NaN = unknown, as an empty cell), codes for
 * the few-valued text columns, and only the set cells of error and warning. About 320 bytes a row, where a row
 * kept as an object costs twice that and its strings more: a long run keeps what the summary, the report and
 * the matchers read, not the rows it already wrote.
 */
export class RecordTable {
  #length = 0
  #capacity = 0
  readonly #numbers = new Map<NumericColumn, NumberColumn>()
  readonly #flags = new Map<Flag, Uint8Array>()
  readonly #codes = new Map<Coded, Uint16Array>()
  readonly #dictionaries = new Map<Coded, Dictionary>()
  readonly #sparse = new Map<Sparse, Map<number, string>>()
  /** req_id `${prefix}-${n}` kept as the prefix's code and n; any other id kept whole, by row. */
  #idPrefixes = new Uint16Array(0)
  #idNumbers = new Float64Array(0)
  readonly #idDictionary: Dictionary = { values: [undefined], index: new Map([[undefined, 0]]) }
  readonly #otherIds = new Map<number, string>()

  /** `rows`: how many the run will have, when known: the columns are made that long once, never copied. */
  constructor(rows = INITIAL_ROWS) {
    for (const c of CODED) this.#dictionaries.set(c, { values: [undefined], index: new Map([[undefined, 0]]) })
    for (const c of SPARSE) this.#sparse.set(c, new Map())
    this.#grow(Math.max(1, rows))
  }

  static of(records: Iterable<RequestRecord>): RecordTable {
    const table = new RecordTable(Array.isArray(records) ? records.length : INITIAL_ROWS)
    for (const r of records) table.append(r)
    return table
  }

  get length(): number {
    return this.#length
  }

  append(r: RequestRecord): void {
    if (this.#length === this.#capacity) this.#grow(this.#capacity * 2)
    const i = this.#length++
    // over the column lists, not the maps' entries: an entry is an array made per column per row (88 MB in a
    // 20,000-request run)
    for (const c of NUMERIC_COLUMNS) {
      const column = this.#numbers.get(c) as NumberColumn
      const v = r[c] ?? Number.NaN
      column[i] = v
      if (column[i] !== v && !Number.isNaN(v)) this.#widen(c, i, v)
    }
    for (const c of FLAGS) (this.#flags.get(c) as Uint8Array)[i] = r[c] ? 1 : 0
    for (const c of CODED) (this.#codes.get(c) as Uint16Array)[i] = this.#code(c, r[c])
    for (const c of SPARSE) {
      const v = r[c]
      if (v !== undefined) (this.#sparse.get(c) as Map<number, string>).set(i, v)
    }
    this.#setId(i, r.req_id)
  }

  /** A batch from the load threads, column by column (no row made an object): the same rows `append` would keep. */
  appendColumns(rows: RowColumns): void {
    const n = rows.length
    if (n === 0) return
    let capacity = this.#capacity
    while (this.#length + n > capacity) capacity *= 2
    if (capacity !== this.#capacity) this.#grow(capacity)
    const at = this.#length
    this.#length += n
    for (const c of NUMERIC_COLUMNS) {
      const from = rows.numbers(c)
      ;(this.#numbers.get(c) as NumberColumn).set(from, at)
      // a count Float32 cannot hold exactly widens its column, as append does
      const column = this.#numbers.get(c) as NumberColumn
      if (column instanceof Float32Array)
        for (let i = 0; i < n; i++) {
          const v = from[i] as number
          if (column[at + i] === v || Number.isNaN(v)) continue
          this.#widen(c, at + i, v)
          ;(this.#numbers.get(c) as NumberColumn).set(from, at)
          break
        }
    }
    const ok = this.#flags.get('success') as Uint8Array
    const generated = this.#flags.get('has_generated_text') as Uint8Array
    for (let i = 0; i < n; i++) {
      ok[at + i] = rows.success(i) ? 1 : 0
      generated[at + i] = rows.hasGeneratedText(i) ? 1 : 0
    }
    for (const c of CODED) {
      const codes = this.#codes.get(c) as Uint16Array
      const texts = rows.texts(c)
      for (let i = 0; i < n; i++) codes[at + i] = this.#code(c, texts[i] ?? undefined)
    }
    for (const c of SPARSE) {
      const cells = this.#sparse.get(c) as Map<number, string>
      const texts = rows.texts(c)
      for (let i = 0; i < n; i++) {
        const v = texts[i]
        if (v !== null && v !== undefined) cells.set(at + i, v)
      }
    }
    const ids = rows.texts('req_id')
    for (let i = 0; i < n; i++) this.#setId(at + i, ids[i] as string)
  }

  /** A numeric column, NaN where unknown: a view valid until the next append. */
  numbers(column: NumericColumn): NumberColumn {
    return (this.#numbers.get(column) as NumberColumn).subarray(0, this.#length)
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
   * A numeric column's known values (of successful rows only, unless `all`), times `scale`, in row order: in
   * `into` when given (a scratch array at least `length` long, so that a summary of a million rows reuses one
   * array for every column), else in a new array of exactly their number.
   */
  known(column: NumericColumn, options: { all?: boolean; scale?: number; into?: Float64Array } = {}): Float64Array {
    const values = this.numbers(column)
    const ok = this.#flags.get('success') as Uint8Array
    const scale = options.scale ?? 1
    const counted = (i: number): boolean => !Number.isNaN(values[i] as number) && (options.all === true || ok[i] === 1)
    let n = 0
    for (let i = 0; i < values.length; i++) if (counted(i)) n++
    const out = options.into?.subarray(0, n) ?? new Float64Array(n)
    let k = 0
    for (let i = 0; i < values.length; i++) if (counted(i)) out[k++] = (values[i] as number) * scale
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
    if (column === 'req_id') return this.#id(i)
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
    out['req_id'] = this.#id(i)
    return out as unknown as RequestRecord
  }

  /** Every row as a record, in the order they were appended (made on each call: hold it only while needed). */
  records(): RequestRecord[] {
    return Array.from({ length: this.#length }, (_, i) => this.record(i))
  }

  #code(column: Coded, value: string | undefined): number {
    const code = codeOf(this.#dictionaries.get(column) as Dictionary, value)
    if (code === undefined) throw new RangeError(`more than 65,535 distinct values of ${column}`)
    return code
  }

  #setId(i: number, id: string): void {
    const dash = id.lastIndexOf('-')
    const tail = id.slice(dash + 1)
    const n = Number(tail)
    const prefix = dash > 0 && String(n) === tail ? codeOf(this.#idDictionary, id.slice(0, dash)) : 0
    this.#idPrefixes[i] = prefix ?? 0
    this.#idNumbers[i] = n
    if (prefix === 0 || prefix === undefined) this.#otherIds.set(i, id)
  }

  #id(i: number): string | undefined {
    const prefix = this.#idPrefixes[i] as number
    return prefix === 0 ? this.#otherIds.get(i) : `${this.#idDictionary.values[prefix]}-${this.#idNumbers[i]}`
  }

  /** A count column given a value Float32 cannot hold: from now on it is Float64. */
  #widen(column: NumericColumn, i: number, value: number): void {
    const wide = new Float64Array(this.#capacity)
    wide.set(this.#numbers.get(column) as NumberColumn)
    wide[i] = value
    this.#numbers.set(column, wide)
  }

  #grow(capacity: number): void {
    const copy = <T extends NumberColumn | Uint8Array | Uint16Array>(old: T | undefined, made: T): T => {
      if (old !== undefined) made.set(old)
      return made
    }
    for (const c of NUMERIC_COLUMNS) {
      const old = this.#numbers.get(c)
      const made = copy(
        old,
        FLOAT32_COLUMNS.has(c) && !(old instanceof Float64Array)
          ? new Float32Array(capacity)
          : new Float64Array(capacity),
      )
      made.fill(Number.NaN, this.#capacity)
      this.#numbers.set(c, made)
    }
    for (const c of FLAGS) this.#flags.set(c, copy(this.#flags.get(c), new Uint8Array(capacity)))
    for (const c of CODED) this.#codes.set(c, copy(this.#codes.get(c), new Uint16Array(capacity)))
    this.#idPrefixes = copy(this.#idPrefixes, new Uint16Array(capacity))
    this.#idNumbers = copy(this.#idNumbers, new Float64Array(capacity))
    this.#capacity = capacity
  }
}
