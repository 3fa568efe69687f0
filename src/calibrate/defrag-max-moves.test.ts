import { expect, test } from 'vitest'
import { defragMaxMoves } from './calibrate-server.ts'

test("llama.cpp's max_moves by the model's layers: (8192 − 2·n_layer) / (6·n_layer), at least one", () => {
  // the random 0.8 B model (16 layers), an 8 B (32), a 70 B (80)
  expect([defragMaxMoves(16), defragMaxMoves(32), defragMaxMoves(80)]).toEqual([85, 42, 16])
  expect(defragMaxMoves(2000)).toBe(1)
})
