import { epochNowMs } from '../../common/clock.ts'
import { firstSentKey, type TimingContext, timingFields } from './meta-info.ts'
import type { FinishReason, SimRequest } from './sim-request.ts'
import { hashString, outputToken } from './sim-tokenizer.ts'
import type { WorkerState } from './worker-state.ts'

/** Output accumulated for one request, and what has been sent of it. */
export class GenerationOutput {
  readonly ids: number[] = []
  text = ''
  sentText = 0
  sentIds = 0
  readonly #seed: number
  readonly #hash: number

  constructor(seed: number, rid: string) {
    this.#seed = seed
    this.#hash = hashString(rid)
  }

  /** Materialises tokens up to `generated`. */
  catchUp(generated: number): void {
    while (this.ids.length < generated) {
      const t = outputToken(this.#seed, this.#hash, this.ids.length)
      this.ids.push(t.id)
      this.text += t.text
    }
  }

  /** Text and ids since the last call, for incremental streaming. */
  takeDelta(): { text: string; ids: number[] } {
    const delta = { text: this.text.slice(this.sentText), ids: this.ids.slice(this.sentIds) }
    this.sentText = this.text.length
    this.sentIds = this.ids.length
    return delta
  }
}

/** Builds /generate payloads (chunks and the non-streamed body) in SGLang's shape. */
export class GeneratePayloads {
  readonly #state: WorkerState
  readonly #timing: TimingContext
  readonly #out: GenerationOutput
  #first = true

  constructor(state: WorkerState, rid: string, dispatchedEpoch: number) {
    this.#state = state
    this.#timing = {
      format: state.config.timestampFormat,
      enableMetrics: state.config.enableMetrics,
      dispatchedEpoch,
      firstSentEpoch: undefined,
    }
    this.#out = new GenerationOutput(state.config.seed, rid)
  }

  /** True when a chunk is due after this many tokens (SGLang's --stream-interval rule). */
  due(generated: number): boolean {
    const interval = this.#state.config.streamInterval
    return interval === 1 || generated % interval === 1
  }

  /**
   * Serialise it at once: `output_ids` is the live, growing array, not copied per chunk (at 500 streams that copy is
   * garbage the simulator collects while it should be stepping).
   */
  payload(req: SimRequest, finish: FinishReason | undefined): Record<string, unknown> {
    this.#out.catchUp(req.generated)
    const incremental = this.#state.config.incremental
    const delta = incremental ? this.#out.takeDelta() : undefined
    const meta: Record<string, unknown> = {
      id: req.rid,
      finish_reason: finish ?? null,
      prompt_tokens: req.promptIds.length,
      weight_version: 'default',
      num_retractions: 0,
      reasoning_tokens: 0,
      completion_tokens: req.generated,
      cached_tokens: req.cachedTokens,
      ...timingFields(req, this.#timing, finish !== undefined),
    }
    if (this.#first) {
      this.#first = false
      const sent = epochNowMs() / 1000
      this.#timing.firstSentEpoch = sent
      meta[firstSentKey(this.#timing.format)] = sent
    }
    if (finish !== undefined) meta['e2e_latency'] = (req.finishedEpoch ?? epochNowMs() / 1000) - req.createdEpoch
    return { text: delta?.text ?? this.#out.text, output_ids: delta?.ids ?? this.#out.ids, meta_info: meta }
  }
}
