import { max, mean, min, standardDeviation } from 'simple-statistics'
import { percentileSorted } from './percentile.ts'

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
 * ms): the same operations, in the same order, as `np.percentile(df.ttft, 99) * 1000` over the CSV.
 */
export function distribution(values: readonly number[], scale = 1): Distribution | undefined {
  if (values.length === 0) return undefined
  const sorted = Float64Array.from(values).sort()
  return {
    count: values.length,
    mean: mean(values as number[]) * scale,
    min: min(values as number[]) * scale,
    p50: percentileSorted(sorted, 50) * scale,
    p90: percentileSorted(sorted, 90) * scale,
    p95: percentileSorted(sorted, 95) * scale,
    p99: percentileSorted(sorted, 99) * scale,
    p999: percentileSorted(sorted, 99.9) * scale,
    max: max(values as number[]) * scale,
    std: standardDeviation(values as number[]) * scale,
  }
}
