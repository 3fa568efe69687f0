import { expect, test } from 'vitest'
import { LOOP_RESOLUTION_MS, loopDelayMs } from './loop-delay-ms.ts'

test('an event-loop delay is what the monitor’s interval exceeds its 1-ms resolution by, never below 0', () => {
  expect(LOOP_RESOLUTION_MS).toBe(1)
  // a timer on time reads its own interval: no delay
  expect(loopDelayMs(1_000_000)).toBe(0)
  expect(loopDelayMs(1_250_000)).toBeCloseTo(0.25, 9)
  expect(loopDelayMs(42_000_000)).toBe(41)
  // a timer the histogram saw fire early (its clock's granularity) is no negative delay
  expect(loopDelayMs(990_000)).toBe(0)
  // an empty histogram: NaN (percentiles) or Infinity (min)
  expect(loopDelayMs(Number.NaN)).toBe(0)
  expect(loopDelayMs(Number.POSITIVE_INFINITY)).toBe(0)
})
