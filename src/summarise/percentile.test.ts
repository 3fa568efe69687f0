import { expect, test } from 'vitest'
import { percentileSorted } from './percentile.ts'

// Expected values are numpy.percentile's (linear interpolation, the default).
test.each([
  [[1, 2, 3, 4], 50, 2.5],
  [[1, 2, 3, 4], 90, 3.7],
  [[1, 2, 3, 4], 99, 3.97],
  [[15, 20, 35, 40, 50], 40, 29],
  [[15, 20, 35, 40, 50], 0, 15],
  [[15, 20, 35, 40, 50], 100, 50],
  [[7], 99, 7],
  [Array.from({ length: 100 }, (_, i) => i + 1), 99, 99.01],
  [Array.from({ length: 1000 }, (_, i) => i), 99.9, 998.001],
])('percentile(%j, %s) = %s', (values, p, expected) => {
  expect(percentileSorted(values, p)).toBeCloseTo(expected, 9)
})

test('no values: NaN, never a made-up number', () => {
  expect(percentileSorted([], 50)).toBeNaN()
})
