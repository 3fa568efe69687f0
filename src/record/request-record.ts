import type { RunClock } from '../common/clock.ts'
import type { ErrorType } from '../send/classify-error.ts'
import type { Observation } from '../send/observation.ts'
import { type ServerInstants, serverInstants } from './server-timestamps.ts'

/**
 * One row of requests.csv. Times are seconds since the run's start; durations are seconds. A field the
 * client or server could not know is `undefined` (an empty CSV cell).
 */
export interface RequestRecord {
  req_id: string
  success: boolean
  error: string | undefined
  host: string
  has_generated_text: boolean
  input_length: number
  expected_output_length: number
  actual_prompt_tokens: number | undefined
  actual_output_tokens: number | undefined
  actual_total_tokens: number | undefined
  output_tokens_from_trace: number | undefined
  decode_length: number | undefined
  arrival_time: number
  router_send_time: number | undefined
  server_created_time: number | undefined
  queue_time_start: number | undefined
  queue_time_end: number | undefined
  server_first_token_time: number | undefined
  finish_time: number | undefined
  server_latency: number | undefined
  total_latency: number | undefined
  ttft: number | undefined
  queue_time_in_router: number | undefined
  queue_time_in_server: number | undefined
  tokenize_time: number | undefined
  pure_queue_time: number | undefined
  client_ttft: number | undefined
  prefill_time: number | undefined
  network_time: number | undefined
  tpot: number | undefined
  itl_mean: number | undefined
  itl_max: number | undefined
  decode_time: number | undefined
  finish_reason: string | undefined
  http_status: number | undefined
  error_type: ErrorType | undefined
  cached_tokens: number | undefined
  dispatch_lag: number
  server_e2e_latency: number | undefined
  chunks: number
  server_timestamps: ServerInstants['variant']
  /** The prompt tokens built for this request (what the server should count); empty without a tokenizer. */
  requested_prompt_tokens: number | undefined
  /** A successful request that did not do what was asked: fewer output tokens, another prompt length. */
  warning: string | undefined
  /** A conversation's session (from 0) and turn (from 1); empty outside conversations. */
  session_id: number | undefined
  turn: number | undefined
  /**
   * The wait on the client for a free slot after the request was due (bench_serving's semaphore wait). Under
   * `maxConcurrency` it is outside ttft and every latency (their clock starts at the send); under `maxInFlight` it is
   * inside them (their clock starts at the scheduled arrival).
   */
  client_queue_time: number | undefined
  /**
   * Time to the first token of the answer itself, reasoning excluded (AIPerf's time to first output token), from
   * the arrival as client_ttft: where the server says which tokens are reasoning (chat's reasoning_content) or its
   * text carries <think>…</think> (/v1/completions, /generate); empty until an answer token is seen.
   */
  ttfo: number | undefined
  /**
   * Reasoning tokens in the answer: the server's count where it gives one, else the reasoning chunks seen (/v1), or
   * the tokens of /generate's chunks up to the one that closes </think>.
   */
  reasoning_tokens: number | undefined
  /**
   * Speculative decoding: output tokens per verify step, the server's meta_info.spec_accept_length where it gives
   * one, else completion_tokens / spec_verify_ct (as SGLang's own tests compute it); empty where it says neither.
   */
  spec_accept_length: number | undefined
  /**
   * Speculative decoding: the share of drafted tokens the target model accepted (accepted ÷ drafted, vLLM's and
   * llama.cpp's acceptance rate), from llama.cpp's timings.draft_n_accepted / draft_n; empty where the server does not
   * say (SGLang gives verify steps, not drafted tokens).
   */
  spec_acceptance: number | undefined
  /** `ttft / actual_prompt_tokens`, seconds per prompt token (to the nanosecond); empty where either is unknown. */
  ttft_per_input_token: number | undefined
  /**
   * TPOT over the answer: (finish − the first answer token) / (answer tokens − 1), the answer's tokens being the
   * output's less `reasoning_tokens`; empty where the answer's start is unknown or it has fewer than 2 tokens.
   */
  tpot_answer: number | undefined
  connect_wait: number | undefined
}

/**
 * Every time and duration is rounded once, here, to the microsecond requests.csv keeps: the summary, the
 * matchers and the report read these same values, so a percentile recomputed from the CSV agrees exactly.
 */
export const toMicros = (v: number): number => Math.round(v * 1e6) / 1e6
const micro = (v: number | undefined): number | undefined => (v === undefined ? undefined : toMicros(v))
const diff = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined ? undefined : toMicros(a - b)
const seconds = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : toMicros(ms / 1000))
const sum = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined ? undefined : a + b

/** Applies the design's formulas (README, "The per-request record") to one observation. */
export function buildRecord(
  obs: Observation,
  clock: Pick<RunClock, 'toRunSeconds'>,
  errorType: ErrorType | undefined,
  streamed: boolean,
): RequestRecord {
  const s = serverInstants(obs.serverTiming, streamed)
  const onRunAxis = (epoch: number | undefined): number | undefined =>
    epoch === undefined ? undefined : toMicros(clock.toRunSeconds(epoch))
  const arrival = toMicros(obs.arrivalMs / 1000)
  const send = seconds(obs.sendMs)
  const created = onRunAxis(s.server_created_time)
  const qStart = onRunAxis(s.queue_time_start)
  const qEnd = onRunAxis(s.queue_time_end)
  const firstToken = onRunAxis(s.server_first_token_time)
  const finish = seconds(obs.finishMs)
  const clientFirst = seconds(obs.firstTokenMs)
  const outTokens = obs.completionTokens
  const ttft = firstToken !== undefined ? diff(firstToken, arrival) : diff(clientFirst, arrival)
  return {
    req_id: obs.reqId,
    success: obs.success,
    error: obs.error,
    host: obs.host,
    has_generated_text: obs.hasGeneratedText,
    input_length: obs.inputLength,
    expected_output_length: obs.expectedOutputLength,
    actual_prompt_tokens: obs.promptTokens,
    actual_output_tokens: outTokens,
    actual_total_tokens: sum(obs.promptTokens, outTokens),
    output_tokens_from_trace: obs.outputTokensFromTrace,
    decode_length: outTokens,
    arrival_time: arrival,
    router_send_time: send,
    server_created_time: created,
    queue_time_start: qStart,
    queue_time_end: qEnd,
    server_first_token_time: firstToken,
    finish_time: finish,
    server_latency: diff(finish, send),
    total_latency: diff(finish, arrival),
    // one meaning everywhere (gate, sweep, capacity, compare, the table): the server's first token where it says
    // when, else the client's — as bench_serving, vllm bench, AIPerf and GuideLLM mean it; summary.ttft_source says
    ttft,
    queue_time_in_router: diff(send, arrival),
    queue_time_in_server: diff(firstToken, created),
    tokenize_time: diff(qStart, created),
    pure_queue_time: diff(qEnd, qStart),
    client_ttft: diff(clientFirst, arrival),
    // SGLang's instants where it gives them; llama.cpp's own duration for the prompt where it gives only that
    prefill_time: diff(firstToken, qEnd) ?? seconds(obs.serverPrefillMs),
    network_time: diff(created, send),
    tpot:
      outTokens !== undefined && outTokens > 1 && clientFirst !== undefined && finish !== undefined
        ? toMicros((finish - clientFirst) / (outTokens - 1))
        : undefined,
    itl_mean: obs.itlCount > 0 ? toMicros(obs.itlSumMs / obs.itlCount / 1000) : undefined,
    itl_max: obs.itlCount > 0 ? toMicros(obs.itlMaxMs / 1000) : undefined,
    decode_time: diff(finish, clientFirst),
    finish_reason: obs.finishReason,
    http_status: obs.httpStatus,
    error_type: errorType,
    cached_tokens: obs.cachedTokens,
    dispatch_lag: toMicros(obs.dispatchLagMs / 1000),
    server_e2e_latency: micro(obs.serverTiming['e2e_latency']),
    chunks: obs.chunks,
    server_timestamps: s.variant,
    requested_prompt_tokens: obs.requestedPromptTokens,
    warning: warningOf(obs, outTokens),
    session_id: obs.sessionId,
    turn: obs.turn,
    client_queue_time: seconds(obs.slotWaitMs),
    ttfo: diff(seconds(obs.firstAnswerMs), arrival),
    // known where the answer was seen to begin (none seen before it is 0); unknown where the route cannot tell
    reasoning_tokens: obs.firstAnswerMs !== undefined ? (obs.reasoningTokens ?? 0) : obs.reasoningTokens,
    spec_accept_length:
      obs.specAcceptLength ??
      (obs.specVerifyCt !== undefined && obs.specVerifyCt > 0 && outTokens !== undefined
        ? toMicros(outTokens / obs.specVerifyCt)
        : undefined),
    spec_acceptance:
      obs.draftTokens !== undefined && obs.draftTokens > 0 && obs.draftAccepted !== undefined
        ? toMicros(obs.draftAccepted / obs.draftTokens)
        : undefined,
    ttft_per_input_token:
      ttft !== undefined && obs.promptTokens !== undefined && obs.promptTokens > 0
        ? Math.round((ttft / obs.promptTokens) * 1e9) / 1e9
        : undefined,
    tpot_answer: answerTpot(seconds(obs.firstAnswerMs), finish, outTokens, obs.reasoningTokens ?? 0),
    connect_wait: diff(seconds(obs.headersWrittenMs), send),
  }
}

/** TPOT over the answer (see RequestRecord.tpot_answer), to the microsecond. */
function answerTpot(
  firstAnswer: number | undefined,
  finish: number | undefined,
  outTokens: number | undefined,
  reasoningTokens: number,
): number | undefined {
  if (firstAnswer === undefined || finish === undefined || outTokens === undefined) return undefined
  const answer = outTokens - reasoningTokens
  return answer > 1 ? toMicros((finish - firstAnswer) / (answer - 1)) : undefined
}

/**
 * Flags a success that is not what was asked: bench_serving's ignore_eos promises the requested output
 * length, and a prompt built to N tokens should count N. Chat templates add tokens, so chat is not compared.
 */
function warningOf(obs: Observation, outTokens: number | undefined): string | undefined {
  if (!obs.success) return undefined
  const notes: string[] = []
  if (outTokens !== undefined && outTokens < obs.expectedOutputLength)
    notes.push(
      `returned ${outTokens} of ${obs.expectedOutputLength} requested output tokens (finish_reason ` +
        `${obs.finishReason ?? 'not given'})`,
    )
  if (
    obs.requestedPromptTokens !== undefined &&
    obs.promptTokens !== undefined &&
    !obs.chat &&
    obs.promptTokens !== obs.requestedPromptTokens
  )
    notes.push(`the server counted ${obs.promptTokens} prompt tokens, ${obs.requestedPromptTokens} were built`)
  return notes.length === 0 ? undefined : notes.join('; ')
}
