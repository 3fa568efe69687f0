import { expect, test } from 'vitest'
import { levelsOnGrid } from './concurrency.ts'

test('the level at each grid point counts every start and end up to and including it', () => {
  const spans = { starts: Float64Array.of(0, 1, 1, 3), ends: Float64Array.of(2, 2, 4, 5) }
  expect(levelsOnGrid(spans, [-1, 0, 0.5, 1, 2, 3, 4, 5, 6])).toEqual([0, 1, 1, 3, 1, 2, 1, 0, 0])
  expect(levelsOnGrid({ starts: new Float64Array(0), ends: new Float64Array(0) }, [0, 1])).toEqual([0, 0])
})
