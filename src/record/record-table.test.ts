import { expect, test } from 'vitest'
import { CSV_COLUMNS } from '../common/columns.ts'
import { RecordTable } from './record-table.ts'
import type { RequestRecord } from './request-record.ts'
import { RowColumns } from './row-batch.ts'

const row = (reqId: string, over: Partial<RequestRecord> = {}): RequestRecord => {
  const r = Object.fromEntries(CSV_COLUMNS.map((c) => [c, undefined])) as unknown as RequestRecord
  return { ...r, req_id: reqId, success: true, has_generated_text: true, ttft: 0.125, ...over }
}

test('rows come back as they went in: every kind of request id, unknown cells, text cells', () => {
  const rows = [
    row('a1b2c3d4-0'),
    row('a1b2c3d4-12345678', { ttft: undefined, success: false, error: 'HTTP 500: boom', error_type: 'http' }),
    row('e5f6-7', { host: 'worker-2', warning: 'short answer', finish_reason: 'length' }),
    row('no-dash-number-x'),
    row('leading-zero-007'),
    row('nodash'),
    row('-5'),
    row('x-1e3'),
    row(''),
  ]
  const table = RecordTable.of(rows)
  expect(table.records()).toEqual(rows)
  expect(table.text('req_id', 1)).toBe('a1b2c3d4-12345678')
  expect(table.numbers('ttft')[1]).toBeNaN()
  expect(table.successes()).toBe(8)
  expect(table.counts('host')).toEqual({ 'worker-2': 1 })
})

test('a table made for fewer rows grows, and keeps every row; a full id dictionary keeps ids whole', () => {
  const table = new RecordTable(2)
  const rows = Array.from({ length: 70_000 }, (_, i) => row(`run${i}-${i}`, { chunks: i }))
  for (const r of rows) table.append(r)
  expect(table.length).toBe(70_000)
  for (const i of [0, 1, 2, 65_534, 65_535, 65_536, 69_999]) expect(table.record(i)).toEqual(rows[i])
  expect(table.known('chunks').reduce((a, b) => a + b, 0)).toBe((69_999 * 70_000) / 2)
})

test('counts are kept exactly: a count Float32 cannot hold makes its column Float64, earlier rows kept', () => {
  const rows = [row('r-0', { chunks: 3, actual_output_tokens: 7 }), row('r-1', { chunks: 2 ** 24 + 1 })]
  const table = RecordTable.of(rows)
  expect(table.records()).toEqual(rows)
  expect(table.known('chunks')).toEqual(Float64Array.of(3, 2 ** 24 + 1))
  expect(table.numbers('actual_output_tokens')).toBeInstanceOf(Float32Array)
})

test('a batch appended by its columns keeps what appending its rows one by one keeps: ids, codes, sparse text, wide counts', () => {
  const rows = [
    row('a1b2c3d4-0', { host: 'w-1', finish_reason: 'length' }),
    row('a1b2c3d4-1', { ttft: undefined, success: false, error: 'HTTP 500: "boom", again', error_type: 'http' }),
    row('odd id, with a comma', { chunks: 2 ** 24 + 1, warning: 'short' }),
    row('x-2', { has_generated_text: false, actual_output_tokens: 7 }),
  ]
  const byRow = new RecordTable(2)
  for (const r of [...rows, ...rows]) byRow.append(r)
  const byColumns = new RecordTable(2)
  byColumns.appendColumns(RowColumns.of(rows))
  byColumns.appendColumns(RowColumns.of([]))
  byColumns.appendColumns(RowColumns.of(rows))
  expect(byColumns.records()).toEqual(byRow.records())
  expect(byColumns.records()).toEqual([...rows, ...rows])
  expect(byColumns.numbers('chunks')).toBeInstanceOf(Float64Array)
  expect(byColumns.known('chunks', { all: true })).toEqual(byRow.known('chunks', { all: true }))
  expect(byColumns.counts('error_type')).toEqual({ http: 2 })
})
