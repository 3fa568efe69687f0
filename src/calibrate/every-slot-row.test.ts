import { expect, test } from 'vitest'
import { everySlotOutput, stepTable } from './calibrate-server.ts'

// the every-slot probe takes every slot, so its cells are its own: decoding as long as the fill held is how its row
// reaches the occupancies loads of many streams meet, and its short prompt keeps it in the table, where a probe with a
// long prompt (its TPOT holds the other users' prefills) is left out
test('the every-slot row reaches the fill’s occupancy and stays in the table; long-prompt probes stay out', () => {
  expect([64, 128, 256, 512, 1024].map(everySlotOutput)).toEqual([128, 128, 128, 384, 896])
  const point = (concurrency: number, prompt: number, output: number, kv: number, ms: number, state: string) => ({
    concurrency,
    context_tokens: prompt + output / 2,
    prompt_tokens: prompt,
    tpot_ms: ms,
    step_ms: ms,
    kv_cells: kv,
    state,
  })
  const decode = [
    point(64, 128, 128, 12_224, 18.3, 'every slot holds 256'),
    point(64, 128, everySlotOutput(1024), 36_900, 29.5, 'every slot holds 1024'),
    point(16, 1024, 128, 48_576, 47.4, 'as found'),
    point(16, 128, 128, 15_549, 9, 'as found'),
    // a profile made before prompt_tokens was kept: a 128-token prompt and output
    {
      concurrency: 16,
      context_tokens: 192,
      tpot_ms: 9.9,
      step_ms: 9.9,
      kv_cells: 19_919,
      state: 'every slot holds 1024',
    },
  ]
  const { table } = stepTable([], decode)
  expect(table.decode).toEqual([
    {
      size: 16,
      points: [
        [15_549, 9],
        [19_919, 9.9],
      ],
    },
    {
      size: 64,
      points: [
        [12_224, 18.3],
        [36_900, 29.5],
      ],
    },
  ])
})
