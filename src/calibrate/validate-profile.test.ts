import { expect, test } from 'vitest'
import { heldOutRates } from './validate-profile.ts'

test('held out below the capacity found at the SLO where there is one, else at fractions of what the probes completed', () => {
  // what the decode probes completed can be past what the server carries at any SLO: 0.85 of it is the last point
  expect(heldOutRates(14.5)).toEqual([4.35, 8.7, 12.3])
  // a capacity found (--validate-slo) puts every point under it, the last at three quarters
  expect(heldOutRates(14.5, 4.25)).toEqual([1.06, 2.13, 3.19])
  // a search that found nothing (0 req/s) leaves the probes' fractions
  expect(heldOutRates(7, 0)).toEqual([2.1, 4.2, 5.95])
})
