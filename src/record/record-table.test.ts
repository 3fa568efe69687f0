import { expect, test } from 'vitest'
import { CSV_COLUMNS } from '../common/columns.ts'
import { RecordTable } from './record-table.ts'
import type { RequestRecord } from './request-record.ts'

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
