import { DURATION_COLUMNS, MS_PER_S } from '../common/columns.ts'
import type { NumberColumn, RecordTable } from '../record/record-table.ts'
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
   * Where ttft came from over the successful rows: the server's first-token timestamp (`server`), the client's first
   * content chunk where the server reports none (`client`: llama.cpp, vLLM, every /v1 route), or both (`mixed`);
   * null with no successful row. Runs of different sources are never compared.
   */
  ttft_source: 'server' | 'client' | 'mixed' | null
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
  /**
   * Speculative decoding, where the server says: output tokens per verify step over the requests (their
   * spec_accept_length, SGLang), the share of drafted tokens accepted (their spec_acceptance, llama.cpp), and the
   * output tokens a streamed chunk carried on average (ITL is per token; a chunk of several tokens is a gap that many
   * times as long). Null where no request said either; each figure null where none said it.
   */
  speculative: {
    accept_length: Distribution | null
    /** Accepted ÷ drafted tokens over the requests (their spec_acceptance), where the server counts drafts. */
    acceptance: Distribution | null
    tokens_per_chunk: number | null
  } | null
}

export interface SummaryInputs {
  table: RecordTable
  targetRate: number
  eventLoopDelayMs: LagSummary
  waitedForSlot: number
  /** Chat prompts carry the server's template tokens: requested and actual are not compared. */
  chat?: boolean
}

const sumOf = (values: ArrayLike<number>): number => {
  let sum = 0
  for (let i = 0; i < values.length; i++) sum += values[i] as number
  return sum
}

/** (n − 1) / span of the known values: a rate over instants. */
const rateOver = (times: NumberColumn): number | null => {
  let n = 0
  let lo = Number.POSITIVE_INFINITY
  let hi = Number.NEGATIVE_INFINITY
  for (const t of times) {
    if (Number.isNaN(t)) continue
    n++
    if (t < lo) lo = t
    if (t > hi) hi = t
  }
  return n >= 2 && hi > lo ? (n - 1) / (hi - lo) : null
}

const known = (values: Float64Array): Distribution | null => distribution(values) ?? null

function lengths(table: RecordTable, chat: boolean, into: Float64Array): RunSummary['lengths'] {
  const requested = table.numbers('requested_prompt_tokens')
  const actual = table.numbers('actual_prompt_tokens')
  const asked = table.numbers('expected_output_length')
  const produced = table.numbers('actual_output_tokens')
  let both = 0
  let exact = 0
  let short = 0
  for (let i = 0; i < table.length; i++) {
    if (!table.success(i)) continue
    const r = requested[i] as number
    const a = actual[i] as number
    if (!Number.isNaN(r) && !Number.isNaN(a)) {
      both++
      if (r === a) exact++
    }
    if ((produced[i] as number) < (asked[i] as number)) short++
  }
  return {
    prompt: {
      requested: known(table.known('requested_prompt_tokens', { into })),
      actual: known(table.known('actual_prompt_tokens', { into })),
      exact: chat ? null : exact,
      differing: chat ? null : both - exact,
    },
    output: {
      requested: known(table.known('expected_output_length', { into })),
      actual: known(table.known('actual_output_tokens', { into })),
      short,
    },
  }
}

function ttftSource(table: RecordTable): RunSummary['ttft_source'] {
  const ttft = table.numbers('ttft')
  const server = table.numbers('server_first_token_time')
  let fromServer = 0
  let fromClient = 0
  for (let i = 0; i < table.length; i++) {
    if (!table.success(i) || Number.isNaN(ttft[i] as number)) continue
    if (Number.isNaN(server[i] as number)) fromClient++
    else fromServer++
  }
  return fromServer > 0 && fromClient > 0 ? 'mixed' : fromServer > 0 ? 'server' : fromClient > 0 ? 'client' : null
}

export function summariseRun(inputs: SummaryInputs): RunSummary {
  const { table } = inputs
  const n = table.length
  const successes = table.successes()
  // the last response received: after an abort that is the abort, not a never-sent request's scheduled arrival
  // one scratch array serves every column in turn: a million rows' summary makes no array per column
  const scratch = new Float64Array(n)
  const duration = table.known('finish_time', { all: true, into: scratch }).reduce((m, v) => Math.max(m, v), 0)
  const metrics: RunSummary['metrics'] = {}
  for (const column of DURATION_COLUMNS) {
    const d = distribution(table.known(column, { all: column === 'dispatch_lag', into: scratch }), MS_PER_S)
    if (d !== undefined) metrics[column] = d
  }
  const lag = metrics.dispatch_lag
  const total = (column: 'actual_prompt_tokens' | 'actual_output_tokens' | 'cached_tokens') => {
    const values = table.known(column, { into: scratch })
    return { known: values.length, sum: sumOf(values) }
  }
  const prompts = total('actual_prompt_tokens')
  const outputs = total('actual_output_tokens')
  const cached = total('cached_tokens')
  const per = (v: number): number => (duration > 0 ? v / duration : 0)
  let warnings = 0
  for (let i = 0; i < n; i++) if (table.success(i) && table.text('warning', i) !== undefined) warnings++
  return {
    requests: n,
    successes,
    failures: n - successes,
    success_rate: n > 0 ? successes / n : 0,
    duration_s: duration,
    request_throughput: per(successes),
    input_token_throughput: prompts.known > 0 ? per(prompts.sum) : null,
    output_token_throughput: outputs.known > 0 ? per(outputs.sum) : null,
    total_token_throughput: prompts.known > 0 && outputs.known > 0 ? per(prompts.sum + outputs.sum) : null,
    target_rate: Number.isFinite(inputs.targetRate) ? inputs.targetRate : null,
    scheduled_rate: rateOver(table.numbers('arrival_time')),
    achieved_rate: rateOver(table.numbers('router_send_time')),
    dispatch_lag_ms: { p50: lag?.p50 ?? 0, p99: lag?.p99 ?? 0, max: lag?.max ?? 0 },
    event_loop_delay_ms: inputs.eventLoopDelayMs,
    waited_for_slot: inputs.waitedForSlot,
    metrics,
    concurrency: concurrencyOverTime(table),
    requests_per_host: table.counts('host'),
    errors_by_type: table.counts('error_type'),
    server_timestamps: table.counts('server_timestamps'),
    cache_hit_rate: prompts.sum > 0 && cached.known > 0 ? cached.sum / prompts.sum : null,
    ttft_source: ttftSource(table),
    lengths: lengths(table, inputs.chat === true, scratch),
    rows_with_warnings: warnings,
    speculative: speculative(table, outputs.sum, scratch),
  }
}

/** The speculative figures over the successful rows that carry them (see RunSummary.speculative). */
function speculative(table: RecordTable, outputTokens: number, scratch: Float64Array): RunSummary['speculative'] {
  const accept = distribution(table.known('spec_accept_length', { into: scratch }), 1) ?? null
  const acceptance = distribution(table.known('spec_acceptance', { into: scratch }), 1) ?? null
  if (accept === null && acceptance === null) return null
  const chunks = sumOf(table.known('chunks', { into: scratch }))
  return { accept_length: accept, acceptance, tokens_per_chunk: chunks > 0 ? outputTokens / chunks : null }
}
