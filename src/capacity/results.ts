import type { BenchOptions } from '../executors/bench-options-schema.ts'
import type { BenchTarget } from '../load/bench-target.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import type { Verdict } from '../summarise/verdict.ts'
import type { ResolvedSearch } from './capacity-options.ts'
import type { ObjectiveVerdict, StepVerdict } from './step-verdict.ts'

/** Runs one benchmark: the library's `benchRequests`, or the perf fixture's (which also fills the end-of-run table). */
export type BenchFn = (target: BenchTarget, options: BenchOptions) => Promise<BenchRun>

export interface CapacityStep {
  /** The step's place in the search (1-based), and the phase that chose its rate. */
  index: number
  phase: 'grow' | 'bisect' | 'repeat' | 'confirm'
  rate: number
  /** Seconds of arrivals (lengthened where the SLO's percentiles needed more samples), and requests sent. */
  durationS: number
  requests: number
  seed: number
  /** The step's verdict: every objective's, pooled with this rate's earlier runs when it is a repeat. */
  decision: StepVerdict | 'invalid' | 'overloaded' | 'unreachable'
  /** True when the decision rests on intervals wholly on one side of every limit (or on an overload). */
  confident: boolean
  objectives: ObjectiveVerdict[]
  /** Why a step says nothing (invalid) or was cut short (overloaded). */
  reason?: string
  /** The run's folder (requests.csv, summary.json, report.html). */
  dir: string
  summary: {
    success_rate: number
    request_throughput: number
    output_token_throughput: number | null
    achieved_rate: number | null
    duration_s: number
    /** Cached prompt tokens over prompt tokens: a step answered from an earlier step's cache says so. */
    cache_hit_rate?: number | null
  }
}

export interface CapacityResult {
  /** The largest rate (req/s) whose steps met the SLO; 0 when even `search.min` did not. */
  capacity: number
  /** [last pass, first fail]; the upper end is null when `search.max` itself passed. */
  bracket: [number, number | null]
  steps: CapacityStep[]
  /**
   * The objective that broke first at the bracket's upper end (the one furthest past its limit), or `saturation`
   * when the server fell behind the offered rate there before any objective broke.
   */
  limitingObjective: string | null
  /** Whether both ends of the bracket were decided with confidence. */
  decidedWithConfidence: boolean
  /**
   * Why the search ended: the bracket within precision, search.max passed, search.min failed, or why it stopped early.
   */
  ended: string
  /**
   * False when the search stopped early (maxSteps, a step twice invalid or unjudgeable): `capacity` is then a lower
   * bound.
   */
  complete: boolean
  /**
   * Why an incomplete search stopped: a step invalid twice (a busy machine), maxSteps, or a step it could not judge.
   */
  stoppedBy?: 'invalid' | 'maxSteps' | 'unjudgeable' | 'unreachable' | 'interrupted'
  /**
   * The longer run at a fraction of the capacity after the search (search.confirm): the capacity holds when it
   * passes. Absent when skipped, or when the search found no capacity. One the client could not send at its pace
   * (invalid) is sent once more, and the first try is `invalidBefore`; `holds` is null when both were invalid.
   */
  confirmation?: CapacityStep & {
    fraction: number
    holds: boolean | null
    invalidBefore?: { dir: string; reason: string }
  }
  /** The rows of each step's first `rampS` seconds are left out of its statistics. */
  rampS: number
  search: ResolvedSearch
  slo: unknown
  files: { json: string; html: string }
}

/**
 * The points of a sweep: arrival rates (open loop), or concurrencies (`maxConcurrency`: all due at once, each timed
 * from its send).
 */
export type SweepPoints =
  | { rates: readonly number[]; durationS?: number }
  | { concurrencies: readonly number[]; durationS?: never }

export interface Percentiles {
  p50: number | null
  p90: number | null
  p99: number | null
}

export interface SweepPoint {
  mode: 'rate' | 'concurrency'
  /** The offered load: req/s, or requests in flight. */
  offered: number
  /**
   * Time to first token, ms: from arrival for rates; from the send for concurrencies (the wait for a slot is not
   * latency there).
   */
  ttft: Percentiles
  /** Which column ttft came from: the server's `ttft`, or `client_ttft` where the server reports no timestamps. */
  ttftSource: 'ttft' | 'client_ttft'
  tpot: Percentiles
  /** End to end, ms: total_latency for rates; server_latency (send to finish) for concurrencies. */
  e2e: Percentiles
  requests: number
  successRate: number
  requestThroughput: number
  outputTokenThroughput: number | null
  /** Output tokens/s one user sees while decoding: 1000 / median TPOT (ms). */
  outputTokensPerUser: number | null
  /** With an `slo`: the fraction of requests within every per-request limit, and per second. */
  goodput: { fraction: number; perSecond: number } | null
  /** Why the run says nothing about the server, if so (the load generator or the simulator fell behind). */
  invalid: string | null
  /** Cached prompt tokens over prompt tokens (null where the server reports none). */
  cacheHitRate: number | null
  /**
   * A rate point: whether the server kept up (completed ≥ 95 % of what arrived: the trend of requests in flight did
   * not grow, as a capacity step is judged); null for a concurrency point, which paces itself.
   */
  keptUp: boolean | null
  /**
   * With an `slo`: whether this point met it (null when it could not be judged: too few samples, not reported, an
   * invalid run), and each objective's verdict as `✓ ttft 'p(99)<500'`.
   */
  slo: { met: boolean | null; verdicts: Verdict[] } | null
  dir: string
}

export interface SweepResult {
  points: SweepPoint[]
  /** With an `slo`: the largest offered load whose point met it; null when none did (or no SLO was given). */
  largestPassing: number | null
  /** False while the sweep runs, or when it was cut short (its points so far are written). */
  complete: boolean
  files: { json: string; html: string }
}
