import { TABLE_METRIC_COLUMNS, tableKey } from '../common/metric-registry.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import type { Verdict } from '../summarise/verdict.ts'

/** One bench run as the end-of-run table shows it (ms, req/s, tok/s). */
export interface CompactSummary {
  name: string | undefined
  target_rate: number | null
  requests: number
  success_rate: number
  ttft_p50?: number | undefined
  ttft_p99?: number | undefined
  total_latency_p99?: number | undefined
  pure_queue_time_p99?: number | undefined
  /** Time per output token, p50 (ms). */
  tpot_p50?: number | undefined
  /** The wait for a free client slot (maxConcurrency, maxInFlight), p99 (ms). */
  client_queue_time_p99?: number | undefined
  /** Cached prompt tokens over prompt tokens, where the server reports them. */
  cache_hit_rate?: number | null
  request_throughput: number
  output_token_throughput: number | null
  csv: string
  /** The run's report.html (absolute), where one was written. */
  html?: string
  /** Requests sent a second (the achieved arrival rate), beside request_throughput (completions a second). */
  achieved_rate?: number | null
  /** Why the run says nothing about the server (the load generator or the simulator fell behind), if so. */
  invalid?: string
  /** 'words' when no tokenizer was found and prompt lengths are words, not tokens. */
  lengths: 'tokens' | 'words'
  /** The rate column where the load mode says it otherwise (`8 users`, `2→20`, `trace×2`, `1.5 sess/s`). */
  rate_label?: string
  /** A shard that began after its startAt, by this many ms. */
  late_start_ms?: number
  /** Each objective a matcher judged for this run. */
  slo: Verdict[]
  /** Every percentile the end-of-run table shows (the metric registry's `table`), as `<metric>_p<N>`, ms. */
  [percentile: `${string}_p${number}`]: number | undefined
}

export interface PerfTaskMeta {
  llmPerf?: CompactSummary[]
}

declare module 'vitest' {
  interface TaskMeta {
    llmPerf?: CompactSummary[]
  }
}

/** The registry's table percentiles of a run (a metric it lacks read from its fallback: ttft from client_ttft). */
function tablePercentiles(m: BenchRun['summary']['metrics']): Record<string, number | undefined> {
  const out: Record<string, number | undefined> = {}
  const at = (column: string | undefined, p: number): number | undefined =>
    column === undefined ? undefined : m[column as keyof typeof m]?.[`p${p}` as 'p50' | 'p99']
  for (const c of TABLE_METRIC_COLUMNS) out[tableKey(c.column, c.p)] = at(c.column, c.p) ?? at(c.fallback, c.p)
  return out
}

export function compactSummary(run: BenchRun): CompactSummary {
  const m = run.summary.metrics
  return {
    name: run.summary.name,
    target_rate: run.summary.target_rate,
    requests: run.summary.requests,
    success_rate: run.summary.success_rate,
    ...tablePercentiles(m),
    cache_hit_rate: run.summary.cache_hit_rate ?? null,
    request_throughput: run.summary.request_throughput,
    output_token_throughput: run.summary.output_token_throughput,
    csv: run.files.csv,
    ...(run.files.html === undefined ? {} : { html: run.files.html }),
    achieved_rate: run.summary.achieved_rate,
    lengths: run.summary.tokenizer.kind === 'words' ? 'words' : 'tokens',
    ...(run.summary.load.late_start_ms === undefined ? {} : { late_start_ms: run.summary.load.late_start_ms }),
    ...(run.summary.load.rate_label === undefined ? {} : { rate_label: run.summary.load.rate_label }),
    slo: [],
  }
}
