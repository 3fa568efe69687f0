import type { RecordTable } from '../record/record-table.ts'
import type { RequestRecord } from '../record/request-record.ts'
import type { ServerMetricsSummary } from '../server-metrics/server-metrics-summary.ts'
import type { TraceSummary } from '../traffic/trace-cache-check.ts'
import type { CacheState } from './cache-state.ts'
import type { ConversationSummary } from './conversation-summary.ts'
import type { RunSummary } from './run-summary.ts'
import type { Verdict } from './verdict.ts'

/** What summary.json holds besides the figures: enough to reproduce and to trust the run. */
export interface RunContext {
  name: string | undefined
  started_at: string
  seed: number
  options: Record<string, unknown>
  package_version: string
  target: string
  server_info: Record<string, unknown> | undefined
  /** What the server's KV cache held when the load began, where its /metrics says; null where it does not. */
  server_cache_state: CacheState | null
  clock: { shared: boolean; note: string }
  warmup: { sent: number; failed: number }
  /**
   * Which tokenizer built the prompts: `hf` (a local tokenizer.json), `server` (its /tokenize) or `words` (lengths in
   * words).
   */
  tokenizer: { kind: 'hf' | 'server' | 'words'; source: string; special_tokens: number; prompts_as: 'ids' | 'text' }
  warnings: string[]
  /**
   * How the load was generated: threads on this host, this host's shard of a run over many, the run's start, and
   * the busiest thread's receive side (its event loop's working fraction, waits for arrivals excluded).
   */
  load: {
    processes: number
    shard: { index: number; count: number } | null
    start_epoch_ms: number
    receive_busy: number
    /**
     * 'open': arrivals on a schedule; 'closed': `users` that each send after their last answer and a think time;
     * 'conversations': sessions on a schedule, each turn after the last answer and a think time.
     */
    mode?: 'open' | 'closed' | 'conversations'
    /** Which executor ran it (src/executors/): open, ramp, closed, conversations, trace. */
    executor?: string
    /** The rate as the end-of-run table shows it where the mode says it otherwise (`8 users`, `2→20`, `trace×2`). */
    rate_label?: string
    users?: number
    think_time_ms?: unknown
    /** A shard that began after its `startAt`: by how many ms (its first requests were sent late). */
    late_start_ms?: number
    /** With `stopOnSaturation`, where the server stopped keeping up: when (s from the start), and the evidence. */
    saturated?: { at_s: number; reason: string }
  }
  /**
   * With the `slo` option: the fraction of all requests that succeeded within every per-request limit, and per second.
   */
  goodput: { fraction: number; per_second: number; slo: Record<string, unknown> } | null
  /** The servers' own gauges over the run (server-metrics.csv), or null with `metricsIntervalMs: 0`. */
  server_metrics: ServerMetricsSummary | null
  /** A trace replay (dataset kind 'trace'): the trace, and the cached tokens its hash ids predict vs reported. */
  trace?: TraceSummary | null
  /** The test that judged the run, and each verdict its matchers gave (`✓ ttft p99`, `✗ ttft.p99 vs baseline …`). */
  test?: string
  verdicts?: Verdict[]
  /** What happened to the topology during the run (a failure schedule's steps), seconds on the run's axis. */
  events?: Array<{ t_s: number; what: string }>
  /** A multi-turn run (dataset kind 'conversations'): TTFT and cache hit rate by turn, the hit rate over time. */
  conversations?: ConversationSummary | null
}

export interface BenchSummary extends RunSummary, RunContext {}

export interface BenchRun {
  /** One row per request, in finish order, as compact columns: what the summary, the report and the matchers read. */
  table: RecordTable
  /** The same rows as records, made from `table` on each read (a long run keeps only the columns). */
  readonly records: RequestRecord[]
  summary: BenchSummary
  files: { csv: string; json: string; html?: string; serverMetrics?: string }
}

/** A BenchRun whose `records` are made from its table when read. */
export function benchRun(table: RecordTable, summary: BenchSummary, files: BenchRun['files']): BenchRun {
  return {
    table,
    summary,
    files,
    get records() {
      return table.records()
    },
  }
}
