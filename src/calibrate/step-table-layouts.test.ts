import { expect, test } from 'vitest'
import { stepTable } from './calibrate-server.ts'

// probes as calibrate keeps them: each occupancy's cells in runs, then the same occupancy interleaved by streams
const states = [
  { fill: 256, runs: 16_900, mixed: 17_200 },
  { fill: 1024, runs: 66_000, mixed: 66_300 },
]
const prefill = states.flatMap((s) => [
  { prompt_tokens: 512, ttft_ms: s.fill / 4 + 12, overhead_ms: 2, kv_cells: s.runs, state: `fill ${s.fill}` },
  {
    prompt_tokens: 512,
    ttft_ms: s.fill / 2 + 12,
    overhead_ms: 2,
    kv_cells: s.mixed,
    state: `fill ${s.fill}, interleaved`,
    layout: 'interleaved' as const,
  },
])
const decode = states.flatMap((s) =>
  [1, 16].flatMap((c) => [
    { concurrency: c, context_tokens: 192, tpot_ms: 0, step_ms: c + s.fill / 100, kv_cells: s.runs },
    {
      concurrency: c,
      context_tokens: 192,
      tpot_ms: 0,
      step_ms: 2 * (c + s.fill / 100),
      kv_cells: s.mixed,
      layout: 'interleaved' as const,
    },
  ]),
)

test('the streams’ steps measured on interleaved cells are a row of their own, as the prompts’ are', () => {
  const { table } = stepTable(prefill, decode)
  expect(table.decode).toEqual([
    {
      size: 1,
      points: [
        [16_900, 3.56],
        [66_000, 11.24],
      ],
    },
    {
      size: 16,
      points: [
        [16_900, 18.56],
        [66_000, 26.24],
      ],
    },
  ])
  expect(table.decodeInterleaved).toEqual([
    {
      size: 1,
      points: [
        [17_200, 7.12],
        [66_300, 22.48],
      ],
    },
    {
      size: 16,
      points: [
        [17_200, 37.12],
        [66_300, 52.48],
      ],
    },
  ])
  expect(table.prefill[0]?.points).toEqual([
    [16_900, 74],
    [66_000, 266],
  ])
  expect(table.prefillInterleaved?.[0]?.points).toEqual([
    [17_200, 138],
    [66_300, 522],
  ])
})

test('without interleaved probes the table has no interleaved rows (a profile made before them reads as it did)', () => {
  const { table } = stepTable(
    prefill.filter((p) => p.layout === undefined),
    decode.filter((d) => d.layout === undefined),
  )
  expect(table.decodeInterleaved).toBeUndefined()
  expect(table.prefillInterleaved).toBeUndefined()
  expect(table.decode.map((r) => r.size)).toEqual([1, 16])
})
