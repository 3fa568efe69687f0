import { max, mean, min, standardDeviation } from 'simple-statistics'
import { percentileSorted } from './statistics.ts'

/** A metric's distribution; values in the unit they were given (ms in summaries). */
export interface Distribution {
  count: number
  mean: number
  min: number
  p50: number
  p90: number
  p95: number
  p99: number
  p999: number
  max: number
  /** Population standard deviation (numpy's default, ddof = 0). */
  std: number
}

/**
 * Statistics of `values` as stored (seconds, as in requests.csv), each then multiplied by `scale` (1000 for
 * ms): the same operations, in the same order, as `np.percentile(df.ttft, 99) * 1000` over the CSV. `values`
 * is sorted in place once the order-dependent sums are taken (a long run's columns are not copied).
 */
export function distribution(values: Float64Array, scale = 1): Distribution | undefined {
  if (values.length === 0) return undefined
  const inRowOrder = values as unknown as number[]
  const sums = { mean: mean(inRowOrder), std: standardDeviation(inRowOrder) }
  const sorted = values.sort()
  return {
    count: values.length,
    mean: sums.mean * scale,
    min: min(inRowOrder) * scale,
    p50: percentileSorted(sorted, 50) * scale,
    p90: percentileSorted(sorted, 90) * scale,
    p95: percentileSorted(sorted, 95) * scale,
    p99: percentileSorted(sorted, 99) * scale,
    p999: percentileSorted(sorted, 99.9) * scale,
    max: max(inRowOrder) * scale,
    std: sums.std * scale,
  }
}
