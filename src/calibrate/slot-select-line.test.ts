import { expect, test } from 'vitest'
import { slotSelectLine } from './slot-select-line.ts'

const probe = (idle: number, extra: number) => ({
  prompt_tokens: 256,
  idle_cells: idle,
  pinned_ms: 50,
  any_slot_ms: 50 + extra,
})

test('two occupancies give the line: a launch whatever the slots hold, and a cost per prompt token per token held', () => {
  // 4 ms + 1e-6 ms per token-cell: 256 × 18,176 → 8.65 ms, 256 × 66,560 → 21.04 ms
  const line = slotSelectLine([probe(18_176, 4 + 256 * 18_176 * 1e-6), probe(66_560, 4 + 256 * 66_560 * 1e-6)])
  expect(line.slotSelectBaseMs).toBeCloseTo(4, 3)
  expect((line.slotSelectPerTokenCellMs as number) / 1e-6).toBeCloseTo(1, 3)
})

test('one occupancy, or a line that would fall with the cells held, gives the fullest cache’s cost per token held alone', () => {
  expect(slotSelectLine([probe(20_000, 5.12)])).toEqual({ slotSelectPerTokenCellMs: 1e-6 })
  const falling = slotSelectLine([probe(10_000, 9), probe(40_000, 5)])
  expect(falling.slotSelectBaseMs).toBeUndefined()
  // kept to 4 significant digits, as every profile figure
  expect((falling.slotSelectPerTokenCellMs as number) / (5 / (256 * 40_000))).toBeCloseTo(1, 3)
  expect(slotSelectLine([])).toEqual({})
})
