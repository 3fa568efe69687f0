import type { RequestRecord } from '../record/request-record.ts'
import type { ServerMetricsSummary } from '../server-metrics/server-metrics-summary.ts'
import type { RunSummary } from './run-summary.ts'

/** What summary.json holds besides the figures: enough to reproduce and to trust the run. */
export interface RunContext {
  name: string | undefined
  started_at: string
  seed: number
  options: Record<string, unknown>
  package_version: string
  target: string
  server_info: Record<string, unknown> | undefined
  clock: { shared: boolean; note: string }
  warmup: { sent: number; failed: number }
  /**
   * Which tokenizer built the prompts: `hf` (a local tokenizer.json), `server` (its /tokenize) or `words` (lengths in
   * words).
   */
  tokenizer: { kind: 'hf' | 'server' | 'words'; source: string; special_tokens: number; prompts_as: 'ids' | 'text' }
  warnings: string[]
  /**
   * With the `slo` option: the fraction of all requests that succeeded within every per-request limit, and per second.
   */
  goodput: { fraction: number; per_second: number; slo: Record<string, unknown> } | null
  /** The servers' own gauges over the run (server-metrics.csv), or null with `metricsIntervalMs: 0`. */
  server_metrics: ServerMetricsSummary | null
}

export interface BenchSummary extends RunSummary, RunContext {}

export interface BenchRun {
  /** One record per request, in finish order. */
  records: RequestRecord[]
  summary: BenchSummary
  files: { csv: string; json: string; html?: string; serverMetrics?: string }
}
