import { SeededRandom } from '../common/seeded-random.ts'

/**
 * The statistics every verdict rests on, in one place: the percentile rule, the percentiles named by key, the
 * bootstrap of a percentile (with its fast path for large runs) and Wilson's interval for a fraction. compare, a
 * baseline's noise and a capacity step's interval each drew their own resamples before.
 */

/**
 * The p-th percentile (0–100) of ascending-sorted values by linear interpolation between closest ranks:
 * numpy's and pandas' default, so `np.percentile(column, p)` over the CSV gives the same number.
 * (simple-statistics' quantile uses a different rule, hence this function.)
 */
export function percentileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length
  if (n === 0) return Number.NaN
  const h = (n - 1) * (p / 100)
  const lo = Math.floor(h)
  const hi = Math.min(lo + 1, n - 1)
  const a = sorted[lo] as number
  return a + (h - lo) * ((sorted[hi] as number) - a)
}

/** The percentiles a spec names by key (`ttft: { p99: 500 }`, `--slo ttft.p999<…`), and what each means. */
export const NAMED_PERCENTILES = { p50: 50, p90: 90, p95: 95, p99: 99, p999: 99.9 } as const
export type PercentileName = keyof typeof NAMED_PERCENTILES

/** 99 → `p99`, 99.9 → `p999`, 97.5 → `p(97.5)`: a percentile as a spec names it. */
export function percentileName(p: number): string {
  for (const [name, value] of Object.entries(NAMED_PERCENTILES)) if (value === p) return name
  return `p(${p})`
}

/** Rounds of a bootstrap unless its caller needs another count (a baseline's noise takes 200). */
export const BOOTSTRAP_ROUNDS = 400

/** Above this many values a resample's percentile is drawn directly rather than by resampling every value. */
export const LARGE_SAMPLE = 10_000

/**
 * Draws one bootstrap resample's p-th percentile of `values` each call, from `random`.
 *
 * Exact (the default below LARGE_SAMPLE): resample every value with replacement and take the percentile. Direct
 * (`direct`, for large runs): a resample's k-th order statistic is the empirical distribution's quantile at a
 * Beta(k, n − k + 1) level, which for thousands of values is normal with that Beta's mean and spread, so a round
 * costs one draw, not a sort of every value (a million-row run's interval: 400 draws, not 400 sorts).
 */
export function percentileResampler(
  values: ArrayLike<number>,
  p: number,
  direct = values.length > LARGE_SAMPLE,
): (random: SeededRandom) => number {
  const n = values.length
  if (direct) {
    const sorted = Float64Array.from(values).sort()
    const k = ((n - 1) * p) / 100 + 1
    const mean = k / (n + 1)
    const sd = Math.sqrt((k * (n - k + 1)) / ((n + 1) ** 2 * (n + 2)))
    return (random) => percentileSorted(sorted, Math.min(1, Math.max(0, mean + sd * random.normal())) * 100)
  }
  const sample = new Float64Array(n)
  return (random) => {
    for (let i = 0; i < n; i++) sample[i] = values[random.int(0, n - 1)] as number
    return percentileSorted(sample.sort(), p)
  }
}

/** The resampled percentiles of `values`, sorted (seeded by the sample size: the same rows give the same draws). */
function resampled(values: ArrayLike<number>, p: number, rounds: number): Float64Array {
  const draw = percentileResampler(values, p)
  const random = new SeededRandom(values.length)
  const stats = new Float64Array(rounds)
  for (let r = 0; r < rounds; r++) stats[r] = draw(random)
  return stats
}

/** A percentile's bootstrap percentile interval at a two-sided `confidence`. */
export function bootstrapInterval(
  values: ArrayLike<number>,
  p: number,
  confidence: number,
  rounds = BOOTSTRAP_ROUNDS,
): [number, number] {
  if (values.length < 2) return [values[0] ?? Number.NaN, values[0] ?? Number.NaN]
  const stats = resampled(values, p, rounds).sort()
  const tail = ((1 - confidence) / 2) * 100
  return [percentileSorted(stats, tail), percentileSorted(stats, 100 - tail)]
}

/** A percentile's sampling noise: its standard deviation over bootstrap resamples of the run's own values. */
export function bootstrapSpread(values: ArrayLike<number>, p: number, rounds = BOOTSTRAP_ROUNDS): number {
  if (values.length < 2) return 0
  const stats = resampled(values, p, rounds)
  const mean = stats.reduce((a, b) => a + b, 0) / rounds
  return Math.sqrt(stats.reduce((a, b) => a + (b - mean) ** 2, 0) / rounds)
}

/** The interval of the change in a percentile from `a` to `b` (b − a), at 95 %, and its two percentiles. */
export function percentileDifference(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  p: number,
  rounds = BOOTSTRAP_ROUNDS,
): { lower: number; upper: number } {
  const direct = a.length + b.length > 2 * LARGE_SAMPLE
  const drawA = percentileResampler(a, p, direct)
  const drawB = percentileResampler(b, p, direct)
  const random = new SeededRandom(a.length * 7919 + b.length)
  const diffs = new Float64Array(rounds)
  for (let r = 0; r < rounds; r++) {
    // b's resample first where direct, a's first where exact: the order each drew in before (same seeds, same bounds)
    if (direct) {
      const vb = drawB(random)
      diffs[r] = vb - drawA(random)
    } else {
      const va = drawA(random)
      diffs[r] = drawB(random) - va
    }
  }
  diffs.sort()
  return { lower: percentileSorted(diffs, 2.5), upper: percentileSorted(diffs, 97.5) }
}

/** The normal quantile for a two-sided `confidence`: the five levels a search accepts (others get 95 %'s). */
export function zFor(confidence: number): number {
  const table: Record<string, number> = { '0.8': 1.2816, '0.9': 1.6449, '0.95': 1.96, '0.98': 2.3263, '0.99': 2.5758 }
  return table[String(confidence)] ?? 1.96
}

/** Wilson's score interval for a fraction: honest at 0 and 1, where the normal approximation is not. */
export function wilson(successes: number, n: number, confidence: number): [number, number] {
  if (n === 0) return [0, 1]
  const z = zFor(confidence)
  const p = successes / n
  const denom = 1 + (z * z) / n
  const centre = (p + (z * z) / (2 * n)) / denom
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denom
  return [Math.max(0, centre - half), Math.min(1, centre + half)]
}
