import { SeededRandom } from '../common/seeded-random.ts'

export interface ScheduleOptions {
  rate: number
  requests: number
  arrival: 'poisson' | 'gamma' | 'constant'
  burstiness: number
  normalize: boolean
  seed: number
}

/**
 * Arrival offsets in seconds from the run's start: the first request at 0, each later one at the running
 * sum of i.i.d. gaps (a free-running process; never rescaled unless `normalize`).
 */
export function arrivalSchedule(opts: ScheduleOptions): Float64Array {
  const n = opts.requests
  const at = new Float64Array(n)
  if (opts.rate === Number.POSITIVE_INFINITY || n === 0) return at
  const gap = nextGap(opts)
  for (let i = 1; i < n; i++) at[i] = (at[i - 1] as number) + gap()
  if (opts.normalize && n > 1 && (at[n - 1] as number) > 0) {
    const factor = n / opts.rate / (at[n - 1] as number)
    for (let i = 1; i < n; i++) at[i] = (at[i] as number) * factor
  }
  return at
}

function nextGap(opts: ScheduleOptions): () => number {
  const mean = 1 / opts.rate
  if (opts.arrival === 'constant') return () => mean
  const random = new SeededRandom(opts.seed)
  if (opts.arrival === 'gamma') {
    const k = opts.burstiness
    return () => random.gamma(k, mean / k)
  }
  return () => random.exponential(mean)
}
