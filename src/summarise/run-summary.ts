import { DURATION_COLUMNS, MS_PER_S } from '../common/columns.ts'
import type { RequestRecord } from '../record/request-record.ts'
import { type ConcurrencySummary, concurrencyOverTime } from './concurrency.ts'
import { type Distribution, distribution } from './distribution.ts'

export interface LagSummary {
  p50: number
  p99: number
  max: number
}

/** Per-experiment figures; every one can be recomputed from requests.csv (durations in ms here). */
export interface RunSummary {
  requests: number
  successes: number
  failures: number
  success_rate: number
  /** Seconds from the run's start to the last finish. */
  duration_s: number
  request_throughput: number
  /** Token rates from the server's own counts; null where no successful request had them (never a made-up 0). */
  input_token_throughput: number | null
  output_token_throughput: number | null
  total_token_throughput: number | null
  target_rate: number | null
  /** (n − 1) / last arrival: the rate the drawn schedule itself realises. */
  scheduled_rate: number | null
  /** (n − 1) / (last send − first send): the rate the client achieved. */
  achieved_rate: number | null
  dispatch_lag_ms: LagSummary
  event_loop_delay_ms: LagSummary
  /** Requests that waited for a free slot under `maxInFlight`. */
  waited_for_slot: number
  metrics: Partial<Record<(typeof DURATION_COLUMNS)[number], Distribution>>
  concurrency: ConcurrencySummary
  requests_per_host: Record<string, number>
  errors_by_type: Record<string, number>
  server_timestamps: Record<string, number>
  cache_hit_rate: number | null
  /**
   * Requested vs actual lengths (tokens), over successful requests: the prompts as built and as the server
   * counted them, the outputs as asked and as produced. `exact` counts prompts the server counted as built.
   */
  lengths: {
    prompt: {
      requested: Distribution | null
      actual: Distribution | null
      exact: number | null
      differing: number | null
    }
    output: { requested: Distribution | null; actual: Distribution | null; short: number }
  }
  /** Successful rows with a `warning` (short output, another prompt length). */
  rows_with_warnings: number
}

export interface SummaryInputs {
  records: readonly RequestRecord[]
  targetRate: number
  eventLoopDelayMs: LagSummary
  waitedForSlot: number
  /** Chat prompts carry the server's template tokens: requested and actual are not compared. */
  chat?: boolean
}

const count = <T>(items: readonly T[], key: (t: T) => string | undefined): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const item of items) {
    const k = key(item)
    if (k !== undefined) out[k] = (out[k] ?? 0) + 1
  }
  return out
}

const total = (records: readonly RequestRecord[], pick: (r: RequestRecord) => number | undefined): number =>
  records.reduce((acc, r) => acc + (pick(r) ?? 0), 0)

const rateOver = (times: number[]): number | null => {
  if (times.length < 2) return null
  const span = Math.max(...times) - Math.min(...times)
  return span > 0 ? (times.length - 1) / span : null
}

const known = (rows: readonly RequestRecord[], pick: (r: RequestRecord) => number | undefined): Distribution | null =>
  distribution(
    rows.flatMap((r) => {
      const v = pick(r)
      return v === undefined ? [] : [v]
    }),
  ) ?? null

function lengths(ok: readonly RequestRecord[], chat: boolean): RunSummary['lengths'] {
  const both = ok.filter((r) => r.requested_prompt_tokens !== undefined && r.actual_prompt_tokens !== undefined)
  const exact = both.filter((r) => r.requested_prompt_tokens === r.actual_prompt_tokens).length
  return {
    prompt: {
      requested: known(ok, (r) => r.requested_prompt_tokens),
      actual: known(ok, (r) => r.actual_prompt_tokens),
      exact: chat ? null : exact,
      differing: chat ? null : both.length - exact,
    },
    output: {
      requested: known(ok, (r) => r.expected_output_length),
      actual: known(ok, (r) => r.actual_output_tokens),
      short: ok.filter((r) => r.actual_output_tokens !== undefined && r.actual_output_tokens < r.expected_output_length)
        .length,
    },
  }
}

export function summariseRun(inputs: SummaryInputs): RunSummary {
  const { records } = inputs
  const ok = records.filter((r) => r.success)
  // the last response received: after an abort that is the abort, not a never-sent request's scheduled arrival
  const duration = records.reduce((m, r) => Math.max(m, r.finish_time ?? 0), 0)
  const metrics: RunSummary['metrics'] = {}
  for (const column of DURATION_COLUMNS) {
    const source = column === 'dispatch_lag' ? records : ok
    const values = source.flatMap((r) => (r[column] === undefined ? [] : [r[column]]))
    const d = distribution(values, MS_PER_S)
    if (d !== undefined) metrics[column] = d
  }
  const lag = metrics.dispatch_lag
  const prompt = total(ok, (r) => r.actual_prompt_tokens)
  const output = total(ok, (r) => r.actual_output_tokens)
  const cached = total(ok, (r) => r.cached_tokens)
  const per = (n: number): number => (duration > 0 ? n / duration : 0)
  const promptKnown = ok.some((r) => r.actual_prompt_tokens !== undefined)
  const outputKnown = ok.some((r) => r.actual_output_tokens !== undefined)
  return {
    requests: records.length,
    successes: ok.length,
    failures: records.length - ok.length,
    success_rate: records.length > 0 ? ok.length / records.length : 0,
    duration_s: duration,
    request_throughput: per(ok.length),
    input_token_throughput: promptKnown ? per(prompt) : null,
    output_token_throughput: outputKnown ? per(output) : null,
    total_token_throughput: promptKnown && outputKnown ? per(prompt + output) : null,
    target_rate: Number.isFinite(inputs.targetRate) ? inputs.targetRate : null,
    scheduled_rate: rateOver(records.map((r) => r.arrival_time)),
    achieved_rate: rateOver(records.flatMap((r) => (r.router_send_time === undefined ? [] : [r.router_send_time]))),
    dispatch_lag_ms: { p50: lag?.p50 ?? 0, p99: lag?.p99 ?? 0, max: lag?.max ?? 0 },
    event_loop_delay_ms: inputs.eventLoopDelayMs,
    waited_for_slot: inputs.waitedForSlot,
    metrics,
    concurrency: concurrencyOverTime(records),
    requests_per_host: count(records, (r) => r.host),
    errors_by_type: count(records, (r) => r.error_type),
    server_timestamps: count(records, (r) => r.server_timestamps),
    cache_hit_rate: prompt > 0 && ok.some((r) => r.cached_tokens !== undefined) ? cached / prompt : null,
    lengths: lengths(ok, inputs.chat === true),
    rows_with_warnings: ok.filter((r) => r.warning !== undefined).length,
  }
}
