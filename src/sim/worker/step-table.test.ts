import { expect, test } from 'vitest'
import { decodeStepMs, prefillStepMs, type StepRow, sortedStepTable, tableStepMs } from './step-table.ts'

// rows as the H100 measured them (llama.cpp, prompt_ms of one prefill in slot 0, the others' cells held)
const prefill: StepRow[] = [
  {
    size: 512,
    points: [
      [512, 14.05],
      [16_640, 87.12],
      [65_024, 330.7],
    ],
  },
  {
    size: 2048,
    points: [
      [2048, 51.39],
      [18_176, 279],
      [66_560, 891.1],
    ],
  },
]

test('a measured point reads back as measured', () => {
  expect(tableStepMs(prefill, 512, 16_640)).toBeCloseTo(87.12, 6)
  expect(tableStepMs(prefill, 2048, 66_560)).toBeCloseTo(891.1, 6)
})

test('between rows and occupancies: the lines between the measurements', () => {
  // halfway between 16,640 and 65,024 cells on the 512 row
  expect(tableStepMs(prefill, 512, 40_832)).toBeCloseTo((87.12 + 330.7) / 2, 6)
  // 1280 tokens: halfway between the rows, each read at the cells asked
  const mid = tableStepMs(prefill, 1280, 16_640)
  const at2048 = 51.39 + ((279 - 51.39) * (16_640 - 2048)) / (18_176 - 2048)
  expect(mid).toBeCloseTo((87.12 + at2048) / 2, 6)
})

test('past the fullest measurement: what it measured; below the emptiest, no cheaper than it', () => {
  expect(tableStepMs(prefill, 512, 100_000)).toBeCloseTo(330.7, 6)
  expect(tableStepMs(prefill, 512, 65_024)).toBeCloseTo(330.7, 6)
  // just inside it, still the line to it
  expect(tableStepMs(prefill, 512, 65_000)).toBeLessThan(330.7)
  expect(tableStepMs(prefill, 512, 0)).toBeCloseTo(14.05, 6)
  // fewer tokens than the first row: the first row's time
  expect(tableStepMs(prefill, 100, 16_640)).toBeCloseTo(87.12, 6)
  // more tokens than the last row: the line through the last two rows
  const at4096 = tableStepMs(prefill, 4096, 66_560)
  const at512 = tableStepMs(prefill, 512, 66_560)
  expect(at4096).toBeCloseTo(891.1 + ((891.1 - at512) / 1536) * 2048, 6)
})

test('no rows, no cost; one point, flat', () => {
  expect(tableStepMs([], 10, 10)).toBe(0)
  expect(tableStepMs([{ size: 8, points: [[100, 5]] }], 64, 1e6)).toBe(5)
})

test('a table written in any order reads as one in order once sorted, as a profile is read', () => {
  const shuffled = {
    prefill: [...prefill].reverse().map((r) => ({ size: r.size, points: [...r.points].reverse() })),
    decode: [],
  }
  const { prefill: rows } = sortedStepTable(shuffled)
  expect(rows).toEqual(prefill)
  expect(tableStepMs(rows, 1280, 40_000)).toBeCloseTo(tableStepMs(prefill, 1280, 40_000), 9)
})

test('a prompt step reads between the runs table and the interleaved one by the share of interleaved cells', () => {
  // the interleaved table as the H200 measured a 2,048-token prompt over 18k cells: ~300 ms where runs read ~200
  const table = sortedStepTable({
    prefill,
    decode: [{ size: 1, points: [[0, 3]] }],
    prefillInterleaved: [
      { size: 512, points: [[16_640, 104.5]] },
      { size: 2048, points: [[18_176, 300]] },
    ],
  })
  expect(prefillStepMs(table, 2048, 18_176, 0)).toBeCloseTo(279, 6)
  expect(prefillStepMs(table, 2048, 18_176, 1)).toBeCloseTo(300, 6)
  expect(prefillStepMs(table, 2048, 18_176, 0.25)).toBeCloseTo(279 + 0.25 * 21, 6)
  expect(prefillStepMs(table, 512, 16_640, 0.5)).toBeCloseTo((87.12 + 104.5) / 2, 6)
  // no interleaved table: the runs table whatever the share
  expect(prefillStepMs(sortedStepTable({ prefill, decode: [] }), 2048, 18_176, 1)).toBeCloseTo(279, 6)
})

test('a streams-only step reads between the decode table and the interleaved one by the share of interleaved cells', () => {
  // session 33's layouts probe at ~18k cells: two streams 5.66 ms in runs, 6.79 interleaved
  const decode: StepRow[] = [
    { size: 1, points: [[18_000, 3.86]] },
    { size: 2, points: [[18_000, 5.66]] },
  ]
  const table = sortedStepTable({
    prefill,
    decode,
    decodeInterleaved: [
      { size: 1, points: [[18_000, 4.27]] },
      { size: 2, points: [[18_000, 6.79]] },
    ],
  })
  expect(decodeStepMs(table, 2, 18_000, 0)).toBeCloseTo(5.66, 9)
  expect(decodeStepMs(table, 2, 18_000, 1)).toBeCloseTo(6.79, 9)
  expect(decodeStepMs(table, 2, 18_000, 0.4)).toBeCloseTo(5.66 + 0.4 * 1.13, 9)
  expect(decodeStepMs(table, 1, 18_000, 2)).toBeCloseTo(4.27, 9)
  // the prompts' interleaved table is not the streams': a step of streams alone reads the decode rows
  const prefillOnly = sortedStepTable({ prefill, decode, prefillInterleaved: prefill })
  expect(decodeStepMs(prefillOnly, 2, 18_000, 1)).toBeCloseTo(5.66, 9)
})

test('past the runs rows’ fullest point the layouts differ by what they differed there, not by a climb only one measured', () => {
  // as the H200 calibrated 16 streams (session 40): the interleaved row probed to 28k cells, the runs row to 20k
  const table = sortedStepTable({
    prefill,
    decode: [
      {
        size: 16,
        points: [
          [14_000, 9],
          [20_000, 12],
        ],
      },
    ],
    decodeInterleaved: [
      {
        size: 16,
        points: [
          [14_000, 9.5],
          [20_000, 12.5],
          [28_000, 16.5],
        ],
      },
    ],
  })
  // where both measured: between them by the share
  expect(decodeStepMs(table, 16, 17_000, 1)).toBeCloseTo(11, 9)
  expect(decodeStepMs(table, 16, 17_000, 0.5)).toBeCloseTo(10.75, 9)
  // past the runs row's reach: its held 12 ms and the 0.5 the layouts differed at 20k, not the interleaved row's 14.5
  expect(decodeStepMs(table, 16, 24_000, 1)).toBeCloseTo(12.5, 9)
  expect(decodeStepMs(table, 16, 40_000, 0.5)).toBeCloseTo(12.25, 9)
  // all in runs: the runs row, held
  expect(decodeStepMs(table, 16, 24_000, 0)).toBeCloseTo(12, 9)
})
