import { expect, test } from 'vitest'
import { LateUnion } from './late-union.ts'

test('threads late at the same moment count it once; late at different moments, each', () => {
  const u = new LateUnion()
  const t0 = 1_795_000_000_000
  // four threads behind over the same 100 ms (one GC pause, a frozen process)
  for (let thread = 0; thread < 4; thread++) u.add(t0, t0 + 100)
  expect(u.seconds).toBeCloseTo(0.1, 6)
  // one more, half overlapping: 50 ms more
  u.add(t0 + 50, t0 + 150)
  expect(u.seconds).toBeCloseTo(0.15, 6)
  // apart from the rest
  u.add(t0 + 1000, t0 + 1002.5)
  expect(u.seconds).toBeCloseTo(0.1525, 6)
  // spans that arrive late and out of order still join
  u.add(t0 + 20, t0 + 30)
  expect(u.seconds).toBeCloseTo(0.1525, 6)
})
