import { SeededRandom } from '../common/seeded-random.ts'

/** One change in a series: the first point after it (0-based), the means on both sides, and how sure. */
export interface ChangePoint {
  /** Index of the first point of the new regime. */
  index: number
  before: number
  after: number
  /** (after − before) / before; Infinity from 0. */
  relative: number
  /** The permutation test's p-value: the share of shuffles whose best split was as strong (Matteson & James). */
  pValue: number
}

export interface ChangePointOptions {
  /** A change is kept when its p-value is at most this. @default 0.01 */
  alpha?: number
  /**
   * Permutations per test. @default 1999 for a segment of up to 100 points, 499 beyond: a short series' p-value near
   * alpha needs the finer estimate (Monte Carlo error ±0.002 at p = 0.01), and costs little there.
   */
  permutations?: number
  /** The fewest points either side of a change. @default 3 */
  minSize?: number
  /** Seeds the permutations: the same series gives the same answer. @default 1 */
  seed?: number
}

/**
 * E-divisive means (Matteson & James, 2014, with α = 1: the energy distance), as Apache Otava (formerly Hunter) finds
 * change points in performance series: the split that maximises the scaled energy distance between the points
 * before and after it, kept when a permutation test says no shuffle of the segment splits as well (p ≤ alpha), then
 * each side searched again. Distribution-free: a shift in the median or in the spread is found, a single outlier
 * is not a change. Each segment's test is exact for its size (no normal approximation).
 */
export function changePoints(series: readonly number[], options: ChangePointOptions = {}): ChangePoint[] {
  const alpha = options.alpha ?? 0.01
  const permutations = (n: number): number => options.permutations ?? (n <= 100 ? 1999 : 499)
  const minSize = Math.max(2, options.minSize ?? 3)
  const random = new SeededRandom(options.seed ?? 1)
  const found: number[] = []
  const search = (from: number, to: number): void => {
    const segment = series.slice(from, to)
    if (segment.length < 2 * minSize) return
    const best = bestSplit(segment, minSize)
    if (best === undefined) return
    let asStrong = 0
    const shuffled = [...segment]
    const rounds = permutations(segment.length)
    for (let r = 0; r < rounds; r++) {
      random.shuffle(shuffled)
      if ((bestSplit(shuffled, minSize)?.q ?? 0) >= best.q) asStrong++
    }
    const p = (asStrong + 1) / (rounds + 1)
    if (p > alpha) return
    found.push(from + best.at)
    pValues.set(from + best.at, p)
    search(from, from + best.at)
    search(from + best.at, to)
  }
  const pValues = new Map<number, number>()
  search(0, series.length)
  const sorted = found.sort((a, b) => a - b)
  // each change's means are over the regimes on its two sides, not the whole series
  return sorted.map((index, k) => {
    const before = mean(series.slice(sorted[k - 1] ?? 0, index))
    const after = mean(series.slice(index, sorted[k + 1] ?? series.length))
    return {
      index,
      before,
      after,
      relative: before === 0 ? (after === 0 ? 0 : Number.POSITIVE_INFINITY) : (after - before) / before,
      pValue: pValues.get(index) as number,
    }
  })
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

/**
 * The split τ of `z` maximising Q(τ) = τ(n − τ)/n · (2·E|X − Y| − E|X − X'| − E|Y − Y'|), with X the points before τ
 * and Y those from τ on, at least `minSize` each. The sums are kept running as τ moves: a segment costs O(n²).
 */
function bestSplit(z: readonly number[], minSize: number): { at: number; q: number } | undefined {
  const n = z.length
  const d = (a: number, b: number): number => Math.abs((z[a] as number) - (z[b] as number))
  // the sums at the first split, then moved along: point t leaves Y for X
  const t0 = minSize
  let between = 0
  let left = 0
  let right = 0
  for (let a = 0; a < t0; a++) for (let b = t0; b < n; b++) between += d(a, b)
  for (let a = 0; a < t0; a++) for (let b = a + 1; b < t0; b++) left += d(a, b)
  for (let a = t0; a < n; a++) for (let b = a + 1; b < n; b++) right += d(a, b)
  let best: { at: number; q: number } | undefined
  for (let t = t0; t <= n - minSize; t++) {
    const m = n - t
    const e = (2 * between) / (t * m) - left / ((t * (t - 1)) / 2) - right / ((m * (m - 1)) / 2)
    const q = ((t * m) / n) * e
    if (best === undefined || q > best.q) best = { at: t, q }
    // point t joins the left side
    let toLeft = 0
    let toRight = 0
    for (let a = 0; a < t; a++) toLeft += d(a, t)
    for (let b = t + 1; b < n; b++) toRight += d(t, b)
    left += toLeft
    right -= toRight
    between += toRight - toLeft
  }
  return best
}
