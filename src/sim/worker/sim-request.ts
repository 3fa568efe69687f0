/** A request inside the simulated engine, with the instants it actually went through (epoch seconds). */
export interface SimRequest {
  rid: string
  promptIds: number[]
  /** Tokens the request will generate (max_new_tokens, or fewer where the simulated EOS comes first). */
  targetTokens: number
  reservedTokens: number
  createdEpoch: number
  waitEntryEpoch: number
  forwardEntryEpoch: number | undefined
  prefillFinishedEpoch: number | undefined
  lastTokenEpoch: number | undefined
  finishedEpoch: number | undefined
  cachedTokens: number
  prefillDone: number
  generated: number
  /** Speculative decoding: the verify steps the request has had (SGLang's meta_info.spec_verify_ct). */
  specVerifyCt: number
  /** The id the request generates at an output position (deterministic, as the streams send it). */
  outputId: (position: number) => number
  aborted: boolean
  /** Fault injection: a pause before this output position, for stallMs. */
  stallAtToken: number | undefined
  stallMs: number
  stalledUntilMs: number
  listener: SimRequestListener
}

export interface SimRequestListener {
  /** New tokens exist (the first with prefill's end). */
  onTokens(req: SimRequest): void
  onFinish(req: SimRequest, reason: FinishReason): void
}

export type FinishReason =
  | { type: 'length'; length: number }
  | { type: 'stop'; matched: number }
  | { type: 'abort'; message: string; status_code: number }

/** What a request brings to the engine; the rest of a SimRequest is its progress, none of it yet. */
export type SimRequestInit = Pick<
  SimRequest,
  'rid' | 'promptIds' | 'targetTokens' | 'createdEpoch' | 'outputId' | 'stallAtToken' | 'stallMs' | 'listener'
>

/** A request as it enters the engine: KV cache reserved for its prompt and its answer, waiting since its creation. */
export function newSimRequest(init: SimRequestInit): SimRequest {
  return {
    rid: init.rid,
    promptIds: init.promptIds,
    targetTokens: init.targetTokens,
    reservedTokens: init.promptIds.length + init.targetTokens,
    createdEpoch: init.createdEpoch,
    waitEntryEpoch: init.createdEpoch,
    forwardEntryEpoch: undefined,
    prefillFinishedEpoch: undefined,
    lastTokenEpoch: undefined,
    finishedEpoch: undefined,
    cachedTokens: 0,
    prefillDone: 0,
    generated: 0,
    specVerifyCt: 0,
    outputId: init.outputId,
    aborted: false,
    stallAtToken: init.stallAtToken,
    stallMs: init.stallMs,
    stalledUntilMs: 0,
    listener: init.listener,
  }
}
