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

export function distribution(values: readonly number[]): Distribution | undefined {
  if (values.length === 0) return undefined
  const sorted = Float64Array.from(values).sort()
  return {
    count: values.length,
    mean: mean(values as number[]),
    min: min(values as number[]),
    p50: percentileSorted(sorted, 50),
    p90: percentileSorted(sorted, 90),
    p95: percentileSorted(sorted, 95),
    p99: percentileSorted(sorted, 99),
    p999: percentileSorted(sorted, 99.9),
    max: max(values as number[]),
    std: standardDeviation(values as number[]),
  }
}
