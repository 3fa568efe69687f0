/**
 * What the client saw of one request, on its own monotonic clock (ms since the run's start), plus the
 * server's numbers copied from the response. `buildRecord` turns it into the CSV row.
 */
export interface Observation {
  index: number
  reqId: string
  inputLength: number
  /** The prompt tokens the server should count (built to the requested length); undefined without a tokenizer. */
  requestedPromptTokens: number | undefined
  /** Sent to /v1/chat/completions, whose template adds prompt tokens. */
  chat: boolean
  expectedOutputLength: number
  /** Scheduled arrival (the Poisson process). */
  arrivalMs: number
  /** How late the dispatcher fired relative to the arrival (client lag). */
  dispatchLagMs: number
  /** When the request was handed to the socket; undefined if it never was. */
  sendMs: number | undefined
  /** When undici wrote its headers on a connection (after making one, where none was open); undefined unknown. */
  headersWrittenMs: number | undefined
  headersMs: number | undefined
  firstTokenMs: number | undefined
  lastTokenMs: number | undefined
  /** When the client received the end of the response; undefined for a request never sent. */
  finishMs: number | undefined
  httpStatus: number | undefined
  host: string
  success: boolean
  error: string | undefined
  hasGeneratedText: boolean
  promptTokens: number | undefined
  completionTokens: number | undefined
  cachedTokens: number | undefined
  outputTokensFromTrace: number | undefined
  finishReason: string | undefined
  /**
   * The first token of the answer itself, reasoning excluded: where the server says which tokens are reasoning
   * (chat's reasoning_content, text inside <think>…</think> on every route); undefined until an answer is seen.
   */
  firstAnswerMs: number | undefined
  /** Reasoning tokens: the server's count (usage) where it gives one, else the reasoning chunks seen. */
  reasoningTokens: number | undefined
  /** Where a text stream is against <think>…</think>: not yet known, inside it, or past it (or none). */
  think: 'unknown' | 'inside' | 'after'
  /** /generate's text so far, kept only until its answer begins (its chunks may repeat it or carry pieces). */
  thinkText: string | undefined
  /** Speculative decoding, where the server says: its verify steps (SGLang's meta_info.spec_verify_ct). */
  specVerifyCt: number | undefined
  /** Its own accept length where it gives one (meta_info.spec_accept_length). */
  specAcceptLength: number | undefined
  /** Draft tokens proposed and accepted over the request, where the server says (llama.cpp's timings.draft_n). */
  draftTokens: number | undefined
  draftAccepted: number | undefined
  /**
   * The server's own time for the prompt, ms, where it gives a duration but no instants (llama.cpp's
   * timings.prompt_ms: from the batch that began the prompt to its first token).
   */
  serverPrefillMs: number | undefined
  /** Per-token inter-token latencies after the first token, summarised as they arrive. */
  itlSumMs: number
  itlCount: number
  itlMaxMs: number
  chunks: number
  /** Server timing keys found in meta_info (epoch seconds or seconds), by their wire name. */
  serverTiming: Record<string, number>
  /** A conversation's turn: its session and turn (from 1); undefined outside conversations. */
  sessionId: number | undefined
  turn: number | undefined
  /**
   * How long the request waited on the client for a free slot (maxConcurrency, maxInFlight, users) after it was
   * due; undefined where the loop does not know (conversations).
   */
  slotWaitMs: number | undefined
  /** The generated text, kept only where a later turn needs it (`''` asks for it; undefined keeps nothing). */
  answer: string | undefined
  /** As `answer`, the generated token ids (/generate's output_ids), where a later turn sends ids. */
  answerIds: number[] | undefined
}

export function newObservation(
  init: Pick<
    Observation,
    'index' | 'reqId' | 'inputLength' | 'expectedOutputLength' | 'arrivalMs' | 'dispatchLagMs' | 'host'
  > &
    Partial<
      Pick<Observation, 'requestedPromptTokens' | 'chat' | 'sessionId' | 'turn' | 'answer' | 'answerIds' | 'slotWaitMs'>
    >,
): Observation {
  // one literal, every field in one order, none spread in: a spread before the rest made V8 copy `init` and then add
  // each later field one transition at a time, 13.5 µs a request of a load thread's CPU (a profile at 200 req/s)
  return {
    index: init.index,
    reqId: init.reqId,
    inputLength: init.inputLength,
    expectedOutputLength: init.expectedOutputLength,
    arrivalMs: init.arrivalMs,
    dispatchLagMs: init.dispatchLagMs,
    host: init.host,
    requestedPromptTokens: init.requestedPromptTokens,
    chat: init.chat ?? false,
    sessionId: init.sessionId,
    turn: init.turn,
    slotWaitMs: init.slotWaitMs,
    answer: init.answer,
    answerIds: init.answerIds,
    sendMs: undefined,
    headersWrittenMs: undefined,
    headersMs: undefined,
    firstTokenMs: undefined,
    lastTokenMs: undefined,
    finishMs: undefined,
    httpStatus: undefined,
    success: false,
    error: undefined,
    hasGeneratedText: false,
    promptTokens: undefined,
    completionTokens: undefined,
    cachedTokens: undefined,
    outputTokensFromTrace: undefined,
    finishReason: undefined,
    firstAnswerMs: undefined,
    reasoningTokens: undefined,
    think: 'unknown',
    thinkText: '',
    specVerifyCt: undefined,
    specAcceptLength: undefined,
    draftTokens: undefined,
    draftAccepted: undefined,
    serverPrefillMs: undefined,
    itlSumMs: 0,
    itlCount: 0,
    itlMaxMs: 0,
    chunks: 0,
    serverTiming: {},
  }
}

/** Records `tokens` new tokens arriving at `atMs`, splitting the gap evenly over them (as bench_serving). */
export function addTokens(obs: Observation, tokens: number, atMs: number): void {
  if (tokens <= 0) return
  if (obs.firstTokenMs === undefined) {
    obs.firstTokenMs = atMs
    obs.lastTokenMs = atMs
    tokens -= 1
    if (tokens === 0) return
  }
  const perToken = (atMs - (obs.lastTokenMs as number)) / tokens
  obs.itlSumMs += perToken * tokens
  obs.itlCount += tokens
  if (perToken > obs.itlMaxMs) obs.itlMaxMs = perToken
  obs.lastTokenMs = atMs
}
