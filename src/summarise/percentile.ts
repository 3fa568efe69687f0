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
