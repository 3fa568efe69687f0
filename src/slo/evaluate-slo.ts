import { fieldScale, NUMERIC_COLUMNS, type NumericColumn } from '../common/columns.ts'
import { InvalidThresholdError } from '../common/errors.ts'
import type { RecordTable } from '../record/record-table.ts'
import type { BenchRun, BenchSummary } from '../summarise/bench-run.ts'
import { percentileSorted } from '../summarise/statistics.ts'
import { type Verdict, verdict } from '../summarise/verdict.ts'
import {
  normalizeSpec,
  type Objective,
  objectiveLabel,
  type RegressionSpec,
  requiredSamples,
  type SloSpec,
} from './slo-spec.ts'

export interface SloOptions {
  /** A baseline file (JSON) to compare with; written when missing (outside CI) or with LLM_PERF_UPDATE_BASELINE=1. */
  compareTo?: string
  /**
   * Percentiles that must not regress beyond the baseline: `{ ttft: { p99: 10 } }` = at most 10 % over it, beyond
   * noise.
   */
  regression?: RegressionSpec
  /** A run whose dispatch lag p99 exceeds this is invalid, not passed or failed. @default 25 */
  maxDispatchLagMs?: number
  /** Likewise for the client's event-loop delay p99. @default 50 */
  maxEventLoopDelayMs?: number
  /**
   * Likewise when a load thread's event loop was busy for more than this fraction of the run, waits for arrivals
   * excluded: it could not read the responses as fast as they came, so their times are the client's. @default 0.9
   */
  maxReceiveBusy?: number
  /**
   * Likewise when a simulator process fell behind (lacked the CPU) by more than this many seconds.
   * @default the larger of 0.1 s and 1 % of the run
   */
  maxSimulatorBehindS?: number
}

/** The limits that judge a run valid; each defaults to the run's own (benchRequests' `validity`), then to ours. */
export type ValidityLimits = Pick<
  SloOptions,
  'maxDispatchLagMs' | 'maxEventLoopDelayMs' | 'maxReceiveBusy' | 'maxSimulatorBehindS'
>

export type ObjectiveStatus = 'pass' | 'fail' | 'too_few_samples' | 'not_reported'

export interface ObjectiveResult {
  objective: Objective
  status: ObjectiveStatus
  observed: number | undefined
  /** Successful samples behind a duration objective. */
  samples: number
  reason: string | undefined
}

export interface SloEvaluation {
  results: ObjectiveResult[]
  /** Set when the load generator fell behind: the run says nothing about the server. */
  invalid: string | undefined
  goodput: { fraction: number; perSecond: number }
}

const DEFAULT_MAX_LAG_MS = 25
const DEFAULT_MAX_LOOP_DELAY_MS = 50
const DEFAULT_MAX_RECEIVE_BUSY = 0.9
/** What to do when the client is the bottleneck. */
const MORE_PROCESSES =
  "spread the load over more cores with benchRequests' `processes` (a number, or 'auto'), or over hosts with `shard`"

const SERVER_FIELDS = new Set([
  'ttft',
  'queue_time_in_server',
  'tokenize_time',
  'pure_queue_time',
  'prefill_time',
  'network_time',
  'server_created_time',
  'queue_time_start',
  'queue_time_end',
  'server_first_token_time',
  'server_e2e_latency',
])
const NUMERIC_FIELDS = new Set<string>(NUMERIC_COLUMNS)

/** A field's values over successful requests, in ms for durations (pass scale 1 for the CSV's seconds). */
export function fieldValues(table: RecordTable, field: string, scale = fieldScale(field)): Float64Array {
  return NUMERIC_FIELDS.has(field) ? table.known(field as NumericColumn, { scale }) : new Float64Array(0)
}

function aggregate(sorted: Float64Array, o: Objective): number {
  if (o.percentile !== undefined) return percentileSorted(sorted, o.percentile)
  if (o.aggregation === 'max') return sorted[sorted.length - 1] as number
  if (o.aggregation === 'min') return sorted[0] as number
  return sorted.reduce((a, b) => a + b, 0) / sorted.length
}

export function holds(observed: number, o: Pick<Objective, 'comparator' | 'limit'>): boolean {
  switch (o.comparator) {
    case '<':
      return observed < o.limit
    case '<=':
      return observed <= o.limit
    case '>':
      return observed > o.limit
    case '>=':
      return observed >= o.limit
  }
}

function notReported(run: BenchRun, field: string): string {
  const ok = run.table.successes()
  if (ok === 0) return `no request succeeded (0 of ${run.table.length}), so there is no ${field} to judge`
  if (!SERVER_FIELDS.has(field)) return `${field} is empty for every successful request`
  const variants = Object.entries(run.summary.server_timestamps)
    .map(([k, n]) => `${k}: ${n}`)
    .join(', ')
  const hint = field === 'ttft' ? ' client_ttft, measured by the client alone, is always available.' : ''
  return (
    `the server reported no timestamps for ${field} (server timestamps seen: ${variants}). ` +
    "It needs SGLang's native /generate (api: 'generate') with --enable-metrics, v0.5.5 or later; " +
    `/v1/* responses carry no timings.${hint}`
  )
}

function serverGaugeMissing(run: BenchRun, field: string): string {
  const sm = run.summary.server_metrics
  if (sm === null)
    return `${field} comes from the servers' /metrics, which this run did not sample (metricsIntervalMs: 0)`
  const notes = Object.entries(sm.sources)
    .map(([name, o]) => `${name}: ${o.note ?? `${o.samples} samples without it`}`)
    .join('; ')
  return `no worker reported ${field.replace(/^peak_/u, '')} on /metrics (${notes})`
}

/** The per-request limit of each duration field: its loosest-percentile objective (max > p999 > … > mean). */
export function perRequestLimits(objectives: readonly Objective[]): Map<string, Objective> {
  const rank = (o: Objective): number =>
    o.aggregation === 'max' ? 101 : o.aggregation === 'min' ? -1 : (o.percentile ?? 0)
  const limits = new Map<string, Objective>()
  for (const o of objectives) {
    if (o.kind !== 'duration' || o.comparator === '>' || o.comparator === '>=') continue
    const seen = limits.get(o.field)
    if (seen === undefined || rank(o) > rank(seen)) limits.set(o.field, o)
  }
  return limits
}

/** Goodput (DistServe, vLLM): the fraction of all requests that succeeded and met every per-request limit. */
/** An objective's verdict as the table, summary.json and sweep.json give it; unjudgeable says why. */
export function objectiveVerdict(r: ObjectiveResult): Verdict {
  const label = objectiveLabel(r.objective)
  if (r.status === 'pass' || r.status === 'fail') return verdict(r.status, label)
  return verdict('unjudgeable', `${label}: ${r.status === 'too_few_samples' ? `${r.samples} samples` : 'not reported'}`)
}

/**
 * Why goodput cannot be judged, if so: a per-request limit on a field no successful request reported (pure_queue_time
 * on a /v1 route). Then every request would count as not good, and goodput would read 0 for a figure that is unknown.
 */
export function goodputUnjudgeable(run: BenchRun, objectives: Objective[]): string | undefined {
  const missing = [...perRequestLimits(objectives).values()]
    .map((o) => o.field)
    .filter((f) => fieldValues(run.table, f).length === 0)
  return missing.length === 0
    ? undefined
    : `goodput cannot be judged: no successful request reported ${[...new Set(missing)].join(', ')}`
}

export function goodput(run: BenchRun, objectives: Objective[]): { fraction: number; perSecond: number } {
  const limits = [...perRequestLimits(objectives).values()]
  const { table } = run
  // a field that is no numeric column is unknown for every request
  const unknown = new Float64Array(table.length).fill(Number.NaN)
  const columns = limits.map((o) => (NUMERIC_FIELDS.has(o.field) ? table.numbers(o.field as NumericColumn) : unknown))
  let good = 0
  for (let i = 0; i < table.length; i++) {
    if (!table.success(i)) continue
    // NaN (unknown) holds no comparison: a request without the field is not good
    if (limits.every((o, k) => holds(((columns[k] as Float64Array)[i] as number) * fieldScale(o.field), o))) good++
  }
  const n = table.length
  return { fraction: n > 0 ? good / n : 0, perSecond: run.summary.duration_s > 0 ? good / run.summary.duration_s : 0 }
}

/** The simulator may lose this much time to a busy CPU (or 1 % of the run, if more) before its run says nothing. */
const MAX_SIMULATOR_BEHIND_S = 0.1

/**
 * Why benchRequests stops sending to a server that refused every connection from the start; its unsent rows' error
 * is `not sent: ` and this, which noSuccess tells apart from the rows that were refused.
 */
export const REFUSED_FROM_THE_START = 'the server refused every connection from the start'
const NOT_SENT_REFUSED = `not sent: ${REFUSED_FROM_THE_START}`

/**
 * Why a run with no successful request passes nothing, in the server's own words: its most common error (and a hint
 * for a refused connection). Undefined when some request succeeded, or when none was sent (an empty run).
 */
export function noSuccess(run: Pick<BenchRun, 'summary' | 'table'>): string | undefined {
  const s = run.summary
  if (s.requests === 0 || s.successes > 0) return undefined
  const counts = new Map<string, number>()
  for (let i = 0; i < run.table.length; i++) {
    const e = run.table.text('error', i) ?? 'failed without an error message'
    counts.set(e, (counts.get(e) ?? 0) + 1)
  }
  // requests not sent once the server had refused every connection from the start are said apart
  const notSent = [...counts].filter(([e]) => e.startsWith(NOT_SENT_REFUSED)).reduce((a, [, k]) => a + k, 0)
  const sent = [...counts].filter(([e]) => !e.startsWith(NOT_SENT_REFUSED))
  const [error, n] = (sent.length > 0 ? sent : [...counts]).sort((a, b) => b[1] - a[1])[0] as [string, number]
  const refused = (s.errors_by_type['refused'] ?? 0) > 0
  return (
    `no request succeeded: ${s.failures} of ${s.requests} failed, ${n + notSent === s.failures ? 'all' : `${n}`} ` +
    `with "${error}"${notSent > 0 ? ` (${notSent} of them not sent, once the first ${n} were refused)` : ''}` +
    `${refused ? ` (connection refused by ${s.target}: is the server running?)` : ''}`
  )
}

/**
 * Why a run says nothing about the server, if it does not: the load generator fell behind its schedule
 * (dispatch lag, event-loop delay) or a simulator process fell behind (a worker its profile, the router its event
 * loop: the process lacked the CPU).
 */
export function invalidRun(s: BenchSummary, options: ValidityLimits = {}): string | undefined {
  const limits = { ...recordedLimits(s), ...definedOnly(options) }
  // with no rate (everything due at once, closed-loop users, a concurrency cap) lateness is the point, not a fault
  const unbounded = s.target_rate === null || s.target_rate === undefined
  const lagLimit = limits.maxDispatchLagMs ?? (unbounded ? Number.POSITIVE_INFINITY : DEFAULT_MAX_LAG_MS)
  const loopLimit = limits.maxEventLoopDelayMs ?? (unbounded ? Number.POSITIVE_INFINITY : DEFAULT_MAX_LOOP_DELAY_MS)
  const busyLimit = limits.maxReceiveBusy ?? DEFAULT_MAX_RECEIVE_BUSY
  const threads = `${s.load.processes} load thread${s.load.processes === 1 ? '' : 's'}`
  if (s.dispatch_lag_ms.p99 > lagLimit)
    return (
      `the load generator fell behind: dispatch lag p99 ${s.dispatch_lag_ms.p99.toFixed(1)} ms > ${lagLimit} ms ` +
      `(maxDispatchLagMs) with ${threads}; ${MORE_PROCESSES}`
    )
  if (s.event_loop_delay_ms.p99 > loopLimit)
    return (
      `the load generator fell behind: event-loop delay p99 ${s.event_loop_delay_ms.p99.toFixed(1)} ms > ` +
      `${loopLimit} ms (maxEventLoopDelayMs) with ${threads}; ${MORE_PROCESSES}`
    )
  if (s.load.receive_busy > busyLimit)
    return (
      'the load generator could not read the responses as fast as they came: its busiest thread worked ' +
      `${(s.load.receive_busy * 100).toFixed(0)} % of the run (waits for arrivals excluded) > ` +
      `${(busyLimit * 100).toFixed(0)} % (maxReceiveBusy) with ${threads}, so token times are partly the client's; ` +
      MORE_PROCESSES
    )
  const outOfFiles = s.errors_by_type['fd_limit']
  if (outOfFiles !== undefined && outOfFiles > 0)
    return (
      `the load generator ran out of file descriptors: ${outOfFiles} request${outOfFiles === 1 ? '' : 's'} never ` +
      'reached the server (raise `ulimit -n` or lower maxInFlight)'
    )
  const allowed = limits.maxSimulatorBehindS ?? Math.max(MAX_SIMULATOR_BEHIND_S, 0.01 * s.duration_s)
  const behind = Object.entries(s.server_metrics?.simulator_fell_behind_s ?? {}).filter(([, v]) => v > allowed)
  if (behind.length > 0)
    return (
      'the simulator fell behind (its processes lacked the CPU, so its timings are partly our CPU, not the model): ' +
      `${behind.map(([w, v]) => `${w} ${(v * 1000).toFixed(0)} ms`).join(', ')} > ${(allowed * 1000).toFixed(0)} ms; ` +
      'give each simulator process a core of its own or lower the load (README, "The simulator\'s limits")'
    )
  return undefined
}

/**
 * What a run whose validity limits were turned off (set to Infinity) hides: the limits off, and why the default
 * limits would call the run invalid, if they would. An overloaded client's run with every limit off printed ✓ and
 * "SLO met" with no warning.
 */
export function limitsOffWarning(s: BenchSummary): string | undefined {
  const off = Object.entries(recordedLimits(s)).flatMap(([k, v]) => (v === Number.POSITIVE_INFINITY ? [k] : []))
  if (off.length === 0) return undefined
  const { validity: _, ...rest } = s.options ?? {}
  const underDefaults = invalidRun({ ...s, options: rest })
  return (
    `validity limits off (${off.join(', ')} = Infinity)` +
    (underDefaults === undefined
      ? ': the default limits would also call this run valid'
      : `: under the default limits this run is invalid: ${underDefaults}`)
  )
}

/** The limits the run was given (summary.json's `options.validity`, Infinity spelled out). */
function recordedLimits(s: BenchSummary): ValidityLimits {
  const v = s.options?.['validity']
  if (typeof v !== 'object' || v === null) return {}
  const out: Record<string, number> = {}
  for (const [k, x] of Object.entries(v)) out[k] = x === 'Infinity' ? Number.POSITIVE_INFINITY : Number(x)
  return out
}

const definedOnly = (o: ValidityLimits): ValidityLimits =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

/** A run-level figure a rate objective reads: rates and throughputs, and the servers' peak gauges. */
export function runFigure(s: BenchSummary, field: string): number | null | undefined {
  const peak = s.server_metrics?.peak
  const figures: Record<string, number | null | undefined> = {
    success_rate: s.success_rate,
    request_throughput: s.request_throughput,
    output_token_throughput: s.output_token_throughput,
    peak_num_running_reqs: peak?.num_running_reqs,
    peak_num_queue_reqs: peak?.num_queue_reqs,
    peak_token_usage: peak?.token_usage,
  }
  return figures[field]
}

export function evaluateSlo(run: BenchRun, spec: SloSpec, options: SloOptions = {}): SloEvaluation {
  const objectives = normalizeSpec(spec)
  const unknown = objectives.filter((o) => o.kind === 'duration' && !NUMERIC_FIELDS.has(o.field)).map((o) => o.field)
  if (unknown.length > 0)
    throw new InvalidThresholdError(
      `Unknown metric ${[...new Set(unknown)].join(', ')}: expected a numeric requests.csv column ` +
        `(e.g. ttft, client_ttft, pure_queue_time, total_latency, tpot) or one of success_rate, request_throughput, ` +
        `output_token_throughput, goodput`,
    )
  const gp = goodput(run, objectives)
  const s = run.summary
  const invalid = invalidRun(s, options)
  const results = objectives.map((o): ObjectiveResult => {
    if (o.kind === 'rate') {
      const unjudgeable = o.field === 'goodput' ? goodputUnjudgeable(run, objectives) : undefined
      if (unjudgeable !== undefined)
        return { objective: o, status: 'not_reported', observed: undefined, samples: 0, reason: unjudgeable }
      const observed = o.field === 'goodput' ? gp.fraction : runFigure(s, o.field)
      if (observed === null || observed === undefined)
        return {
          objective: o,
          status: 'not_reported',
          observed: undefined,
          samples: 0,
          reason: serverGaugeMissing(run, o.field),
        }
      return {
        objective: o,
        status: holds(observed, o) ? 'pass' : 'fail',
        observed,
        samples: run.table.length,
        reason: undefined,
      }
    }
    // aggregated in the CSV's unit, then scaled: what `np.percentile(df[field], 99) * 1000` gives
    const values = fieldValues(run.table, o.field, 1)
    if (values.length === 0)
      return {
        objective: o,
        status: 'not_reported',
        observed: undefined,
        samples: 0,
        reason: notReported(run, o.field),
      }
    const needed = requiredSamples(o)
    if (values.length < needed) {
      return {
        objective: o,
        status: 'too_few_samples',
        observed: undefined,
        samples: values.length,
        reason:
          `${o.aggregation} needs at least ${needed} successful samples to mean anything, ` +
          `got ${values.length} (set minSamples to override)`,
      }
    }
    const observed = aggregate(values.sort(), o) * fieldScale(o.field)
    return {
      objective: o,
      status: holds(observed, o) ? 'pass' : 'fail',
      observed,
      samples: values.length,
      reason: undefined,
    }
  })
  return { results, invalid, goodput: gp }
}
