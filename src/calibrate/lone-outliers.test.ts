import { expect, test } from 'vitest'
import { stepTable } from './calibrate-server.ts'
import { repairLoneOutliers } from './lone-outliers.ts'

test('a spike above both neighbours reads the line between them, and the rest of the row stays as measured', () => {
  // session 34's H200 calibration, a 256-token prompt by the cells held: 58.35 where 18.06 and 38.66 stood beside it
  const row: Array<[number, number]> = [
    [781, 10.35],
    [4288, 18.06],
    [8320, 58.35],
    [16384, 38.66],
    [32512, 96.88],
    [64768, 153.8],
  ]
  const { points, repaired } = repairLoneOutliers(row)
  const line = 18.06 + ((38.66 - 18.06) * (8320 - 4288)) / (16384 - 4288)
  expect(repaired).toEqual([{ cells: 8320, measured: 58.35, used: Number(line.toPrecision(4)) }])
  expect(points.map((p) => p[1])).toEqual([10.35, 18.06, Number(line.toPrecision(4)), 38.66, 96.88, 153.8])
  // what was given is left as it was
  expect(row[2]).toEqual([8320, 58.35])
})

test('a dip below both neighbours is mended as a spike is; a step that stays up, the ends and noise are not', () => {
  const dip = repairLoneOutliers([
    [1000, 10],
    [2000, 4],
    [3000, 12],
  ])
  expect(dip.repaired).toEqual([{ cells: 2000, measured: 4, used: 11 }])
  // a step up that stays up (a new micro-batch, a defrag) is what the server does
  const step: Array<[number, number]> = [
    [1000, 10],
    [2000, 30],
    [3000, 31],
    [4000, 33],
  ]
  expect(repairLoneOutliers(step)).toEqual({ points: step, repaired: [] })
  // a row's first point read high is not judged (no neighbour before it), nor does it make the next one a dip
  const end: Array<[number, number]> = [
    [1000, 60],
    [2000, 10],
    [3000, 12],
    [4000, 14],
  ]
  expect(repairLoneOutliers(end).repaired).toEqual([])
  // points at the same cells (a decode row whose streams met one occupancy) are not judged against each other
  const flat: Array<[number, number]> = [
    [12224, 22],
    [12224, 8],
    [12224, 21],
  ]
  expect(repairLoneOutliers(flat).repaired).toEqual([])
  expect(repairLoneOutliers([])).toEqual({ points: [], repaired: [] })
})

test('two spikes are mended worst first, each against its neighbours as they then stand', () => {
  const { repaired } = repairLoneOutliers([
    [1000, 10],
    [2000, 40],
    [3000, 12],
    [4000, 30],
    [5000, 14],
  ])
  expect(repaired).toEqual([
    { cells: 2000, measured: 40, used: 11 },
    { cells: 4000, measured: 30, used: 13 },
  ])
})

test('the factor is the caller’s: at 1.2 a 30 % spike is mended, at 1.4 it is kept', () => {
  const row: Array<[number, number]> = [
    [1000, 10],
    [2000, 13],
    [3000, 10],
  ]
  expect(repairLoneOutliers(row, 1.2).repaired).toEqual([{ cells: 2000, measured: 13, used: 10 }])
  expect(repairLoneOutliers(row).repaired).toEqual([])
})

test('calibrate’s step table mends each row’s lone spikes and says which, by row, size and cells', () => {
  const prefill = [781, 4288, 8320, 16384].map((kv_cells, i) => ({
    prompt_tokens: 256,
    ttft_ms: [12.35, 20.06, 60.35, 40.66][i] as number,
    overhead_ms: 2,
    kv_cells,
  }))
  const decode = [11867, 13019, 15323].map((kv_cells, i) => ({
    concurrency: 16,
    context_tokens: 64,
    tpot_ms: 0,
    step_ms: [10.17, 6.006, 10.04][i] as number,
    kv_cells,
  }))
  const { table, repaired } = stepTable(prefill, decode)
  expect(repaired).toEqual([
    { row: 'prefill', size: 256, cells: 8320, measured: 58.35, used: 24.93 },
    { row: 'decode', size: 16, cells: 13019, measured: 6.006, used: 10.13 },
  ])
  expect(table.prefill[0]?.points).toEqual([
    [781, 10.35],
    [4288, 18.06],
    [8320, 24.93],
    [16384, 38.66],
  ])
  expect(table.decode[0]?.points[1]).toEqual([13019, 10.13])
})
