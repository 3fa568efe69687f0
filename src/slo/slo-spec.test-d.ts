// Type tests, checked by `npm run typecheck`: an unused @ts-expect-error is itself an error.
import { expect } from 'vitest'
import type { BenchOptions, BenchRun, SloSpec } from '../index.ts'

declare const run: BenchRun

export const valid: SloSpec = {
  ttft: { p99: 500 },
  pure_queue_time: ['p(99)<50'],
  success_rate: { min: 0.99 },
  peak_num_queue_reqs: { max: 8 },
}

// @ts-expect-error a misspelt metric name fails tsc, not the run
export const misspelt: SloSpec = { tfft: { p99: 500 } }

// @ts-expect-error a run-level figure takes min/max, not percentiles
export const wrongKind: SloSpec = { success_rate: { p99: 1 } }

// @ts-expect-error a text column cannot carry an objective
export const textColumn: SloSpec = { host: { p99: 1 } }

// @ts-expect-error the goodput SLO in benchRequests' options is the same type
export const inOptions: BenchOptions = { requests: 1, slo: { ttft_p99: { p99: 5 } } }

export function matcher(): void {
  // @ts-expect-error toMeetSlo takes the same spec
  expect(run).toMeetSlo({ ttfb: { p99: 5 } })
}
