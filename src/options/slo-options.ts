import type { NumericColumn } from '../common/columns.ts'

/** Duration objectives in milliseconds; each passes when the observed value is at most the limit. */
export interface DurationObjectives {
  p50?: number
  p90?: number
  p95?: number
  p99?: number
  p999?: number
  mean?: number
  max?: number
  /** Successful samples a percentile needs before it means anything. @default ⌈1 / (1 − p)⌉: p99 → 100 */
  minSamples?: number
}

export interface RateObjectives {
  min?: number
  max?: number
}

/**
 * Run-level figures bounded by min/max (k6: 'rate>0.99', or 'value<32'). The peak_* ones are the servers'
 * own gauges from server-metrics.csv: the largest value any one worker reported during the run.
 */
export const RATE_METRICS = [
  'success_rate',
  'request_throughput',
  'output_token_throughput',
  'goodput',
  'peak_num_running_reqs',
  'peak_num_queue_reqs',
  'peak_token_usage',
] as const
export type RateMetric = (typeof RATE_METRICS)[number]

/** A metric an SLO may name: a numeric requests.csv column (a duration in ms, or a count), or a run-level figure. */
export type SloMetric = NumericColumn | RateMetric

/**
 * An SLO spec: record fields (ttft, pure_queue_time, total_latency, …) with duration objectives or
 * k6-style threshold strings, and run-level figures with bounds. A misspelt metric name is a type error.
 * @example { ttft: { p99: 500 }, pure_queue_time: ['p(99)<50'], success_rate: { min: 0.99 } }
 */
export type SloSpec = {
  [M in NumericColumn]?: DurationObjectives | readonly string[]
} & {
  [M in RateMetric]?: RateObjectives | readonly string[]
}

/** Percentiles that may not regress beyond a baseline: `{ ttft: { p99: 10 } }` = at most 10 % over it, past noise. */
export type RegressionSpec = Record<string, Partial<Record<'p50' | 'p90' | 'p95' | 'p99' | 'p999', number>>>
