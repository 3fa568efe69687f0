import { SeededRandom } from '../common/seeded-random.ts'

export interface ScheduleOptions {
  rate: number
  requests: number
  /** 'trace' schedules are the trace's own times (src/traffic/); here they fall back to Poisson. */
  arrival:
    | 'poisson'
    | 'gamma'
    | 'constant'
    | 'trace'
    | { kind: 'ramp'; strategy: 'linear' | 'exponential'; startRps: number; endRps: number }
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
  if (typeof opts.arrival === 'object') return rampSchedule(opts.arrival, n, opts.seed)
  if (opts.rate === Number.POSITIVE_INFINITY || n === 0) return at
  const gap = nextGap(opts)
  for (let i = 1; i < n; i++) at[i] = (at[i - 1] as number) + gap()
  if (opts.normalize && n > 1 && (at[n - 1] as number) > 0) {
    const factor = n / opts.rate / (at[n - 1] as number)
    for (let i = 1; i < n; i++) at[i] = (at[i] as number) * factor
  }
  return at
}

/** The rate request i of n arrives at, on a ramp from `startRps` to `endRps` (vllm bench serve's ramp-up). */
export function rampRate(
  ramp: { strategy: 'linear' | 'exponential'; startRps: number; endRps: number },
  i: number,
  n: number,
): number {
  const f = n > 1 ? i / (n - 1) : 0
  return ramp.strategy === 'linear'
    ? ramp.startRps + (ramp.endRps - ramp.startRps) * f
    : ramp.startRps * (ramp.endRps / ramp.startRps) ** f
}

/** A ramp's arrivals: the first at 0, request i after a Poisson gap at request i's rate. */
function rampSchedule(
  ramp: { strategy: 'linear' | 'exponential'; startRps: number; endRps: number },
  n: number,
  seed: number,
): Float64Array {
  const at = new Float64Array(n)
  const random = new SeededRandom(seed)
  for (let i = 1; i < n; i++) at[i] = (at[i - 1] as number) + random.exponential(1 / rampRate(ramp, i, n))
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
