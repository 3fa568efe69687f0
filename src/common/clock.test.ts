import { expect, test } from 'vitest'
import { epochNowMs } from './clock.ts'

test('epochNowMs reads the wall clock to a tenth of a millisecond, as a server’s time.time() does', () => {
  epochNowMs()
  for (let i = 0; i < 200; i++) {
    const before = Date.now()
    const now = epochNowMs()
    const after = Date.now()
    // Date.now() is the wall clock floored to the millisecond: `now` lies in [before, after + 1) give or take the
    // anchor's few µs (performance.timeOrigin had sat 2 ms off it on a busy machine)
    expect(now).toBeGreaterThanOrEqual(before - 0.1)
    expect(now).toBeLessThan(after + 1.1)
  }
})
