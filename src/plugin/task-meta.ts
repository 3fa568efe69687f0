import type { BenchRun } from '../summarise/bench-run.ts'
import type { Verdict } from '../summarise/verdict.ts'

/** One bench run as the end-of-run table shows it (ms, req/s, tok/s). */
export interface CompactSummary {
  name: string | undefined
  target_rate: number | null
  requests: number
  success_rate: number
  ttft_p50: number | undefined
  ttft_p99: number | undefined
  total_latency_p99: number | undefined
  pure_queue_time_p99: number | undefined
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
}

export interface PerfTaskMeta {
  llmPerf?: CompactSummary[]
}

declare module 'vitest' {
  interface TaskMeta {
    llmPerf?: CompactSummary[]
  }
}

export function compactSummary(run: BenchRun): CompactSummary {
  const m = run.summary.metrics
  return {
    name: run.summary.name,
    target_rate: run.summary.target_rate,
    requests: run.summary.requests,
    success_rate: run.summary.success_rate,
    ttft_p50: m.ttft?.p50 ?? m.client_ttft?.p50,
    ttft_p99: m.ttft?.p99 ?? m.client_ttft?.p99,
    total_latency_p99: m.total_latency?.p99,
    pure_queue_time_p99: m.pure_queue_time?.p99,
    tpot_p50: m.tpot?.p50,
    client_queue_time_p99: m.client_queue_time?.p99,
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
