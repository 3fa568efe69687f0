import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MessageChannel } from 'node:worker_threads'
import { parse } from 'csv-parse/sync'
import { stringify } from 'csv-stringify/sync'
import { expect, test } from 'vitest'
import { neutralise, unneutralise } from '../common/artifact-file.ts'
import { CSV_COLUMNS, NUMERIC_COLUMNS } from '../common/columns.ts'
import { addSecrets } from '../common/redact.ts'
import { CsvWriter, csvColumnLines, csvLineBytes } from './csv-writer.ts'
import type { RequestRecord } from './request-record.ts'
import { type RowBatch, RowColumns, transferOf } from './row-batch.ts'

/** What requests.csv was before its cells were formatted by hand: csv-stringify's sync API over these cells. */
const oracleCell = (value: unknown): unknown => {
  if (value === undefined || value === null) return ''
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toFixed(9))
  if (typeof value === 'string') return neutralise(value)
  return value
}
const oracle = (rows: readonly RequestRecord[]): string =>
  stringify(
    rows.map((r) => CSV_COLUMNS.map((c) => oracleCell(r[c]))),
    { cast: { boolean: (b: boolean) => String(b) } },
  )

/** A small deterministic generator (xorshift32): the same rows every run. */
function random(seed: number): () => number {
  let x = seed
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 2 ** 32
  }
}

const TEXTS = ['', 'a', 'a,b', 'say "hi"', 'line\nbreak', 'cr\rhere', '=1+2', '-3', '+x', '@me', '\tt', 'ünï', '"', ',']

function rows(n: number, seed: number): RequestRecord[] {
  const rnd = random(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T
  const numbers = [0, 1, -1, 42, 1e-7, 123456789, 0.1 + 0.2, 1 / 3, -2.5e-10, 1.234567, 2 ** 31]
  return Array.from({ length: n }, () => {
    const r: Record<string, unknown> = {}
    for (const c of CSV_COLUMNS) {
      const roll = rnd()
      // both flags known on every row, as buildRecord sets them (a batch carries a flag as a bit)
      if (c === 'success' || c === 'has_generated_text') r[c] = roll < 0.6
      else if (roll < 0.2) continue
      else if ((NUMERIC_COLUMNS as readonly string[]).includes(c))
        r[c] = roll < 0.6 ? pick(numbers) : (rnd() - 0.5) * 10 ** Math.floor(rnd() * 8)
      else r[c] = pick(TEXTS) + (roll < 0.5 ? pick(TEXTS) : '')
    }
    return r as unknown as RequestRecord
  })
}

test('requests.csv lines are what csv-stringify wrote, cell for cell: quoting, doubled quotes, line breaks, neutralised formulas, numbers to the nanosecond', () => {
  for (const seed of [1, 2, 3, 99]) {
    const batch = rows(300, seed)
    expect(csvColumnLines(RowColumns.of(batch))).toBe(oracle(batch))
  }
})

test('a file written by CsvWriter reads back through csv-parse as the rows it was given', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'csv-writer-')), 'requests.csv')
  const writer = new CsvWriter(path)
  const batch = rows(200, 7)
  writer.writeColumns(RowColumns.of(batch.slice(0, 120)))
  writer.writeColumns(RowColumns.of(batch.slice(120)))
  void writer.close()
  const text = readFileSync(path, 'utf8')
  expect(text.split('\n', 1)[0]).toBe(CSV_COLUMNS.join(','))
  const read = parse(text, { columns: true }) as Array<Record<string, string>>
  expect(read).toHaveLength(batch.length)
  for (let i = 0; i < batch.length; i++) {
    for (const c of CSV_COLUMNS) {
      const v = (batch[i] as unknown as Record<string, unknown>)[c]
      const cell = (read[i] as Record<string, string>)[c] as string
      if (v === undefined) expect(cell).toBe('')
      else if (typeof v === 'string') expect(unneutralise(cell)).toBe(v)
      else if (typeof v === 'boolean') expect(cell).toBe(String(v))
      // written to the nanosecond (and −0 as 0)
      else expect(Number(cell)).toBe((Number.isInteger(v) ? (v as number) : Number((v as number).toFixed(9))) + 0)
    }
  }
})

test('a batch whose load thread formatted its lines, posted with them transferred, is written byte for byte as the coordinator would have written it, a registered secret masked in it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'csv-writer-'))
  const secret = 'sk-thread-formatted-9f3a'
  addSecrets([secret])
  const batch = rows(150, 11)
  // a secret a server echoed into an error cell, as a load thread (which registers none) leaves it
  ;(batch[3] as RequestRecord).error = `rejected key ${secret}`
  const { port1, port2 } = new MessageChannel()
  const arrived = new Promise<RowBatch>((resolve) => port2.once('message', resolve))
  const { batch: packed, columns } = RowColumns.packed(batch)
  packed.csv = csvLineBytes(columns)
  port1.postMessage(packed, transferOf(packed))
  // transferred: the sender keeps none of the lines' memory
  expect(packed.csv?.byteLength).toBe(0)
  const received = new RowColumns(await arrived)
  port1.close()
  expect(received.csvLines?.byteLength).toBeGreaterThan(0)
  const write = (name: string, columns: RowColumns): string => {
    const writer = new CsvWriter(join(dir, name))
    writer.writeColumns(columns)
    void writer.close()
    return readFileSync(join(dir, name), 'utf8')
  }
  const fromThread = write('thread.csv', received)
  const fromColumns = write('columns.csv', RowColumns.of(batch))
  expect(fromThread).toBe(fromColumns)
  expect(fromThread).not.toContain(secret)
  expect(fromThread).toContain('rejected key ***')
})
