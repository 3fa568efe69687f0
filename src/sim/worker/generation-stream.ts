import { epochNowMs } from '../../common/clock.ts'
import { firstSentKey, type TimingContext, timingFields } from './meta-info.ts'
import type { FinishReason, SimRequest } from './sim-request.ts'
import { hashString, outputToken } from './sim-tokenizer.ts'
import type { WorkerState } from './worker-state.ts'

/**
 * Output accumulated for one request, and what has been sent of it. Beside the text and ids it keeps their JSON
 * forms, grown a token at a time: a chunk then costs a few string joins instead of serialising the whole
 * cumulative output again (SGLang's default /generate stream repeats all text so far in every chunk).
 */
export class GenerationOutput {
  readonly ids: number[] = []
  text = ''
  /** `text` as a JSON string's contents (escaped, no quotes). */
  textJson = ''
  /** `ids` as a JSON array's contents (no brackets). */
  idsJson = ''
  sentText = 0
  sentIds = 0
  #sentTextJson = 0
  #sentIdsJson = 0
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
      this.idsJson += this.ids.length === 0 ? String(t.id) : `,${t.id}`
      this.ids.push(t.id)
      this.text += t.text
      this.textJson += JSON.stringify(t.text).slice(1, -1)
    }
  }

  /** Text and ids since the last call, for incremental streaming. */
  takeDelta(): { text: string; ids: number[] } {
    const delta = { text: this.text.slice(this.sentText), ids: this.ids.slice(this.sentIds) }
    this.#markSent()
    return delta
  }

  /** As takeDelta, in JSON: `"text":"…","output_ids":[…]`. */
  takeDeltaJson(): string {
    const ids = this.idsJson.slice(this.#sentIdsJson + (this.#sentIdsJson > 0 ? 1 : 0))
    const json = `"text":"${this.textJson.slice(this.#sentTextJson)}","output_ids":[${ids}]`
    this.#markSent()
    return json
  }

  #markSent(): void {
    this.sentText = this.text.length
    this.sentIds = this.ids.length
    this.#sentTextJson = this.textJson.length
    this.#sentIdsJson = this.idsJson.length
  }
}

/** Builds /generate payloads (chunks and the non-streamed body) in SGLang's shape. */
export class GeneratePayloads {
  readonly #state: WorkerState
  readonly #timing: TimingContext
  readonly #out: GenerationOutput
  readonly #ridJson: string
  #first = true
  /** The meta_info fields after completion_tokens that stay the same from the second chunk to the last but one. */
  #steadyTail: string | undefined

  constructor(state: WorkerState, rid: string, dispatchedEpoch: number) {
    this.#state = state
    this.#timing = {
      format: state.config.timestampFormat,
      enableMetrics: state.config.enableMetrics,
      dispatchedEpoch,
      firstSentEpoch: undefined,
    }
    this.#out = new GenerationOutput(state.config.seed, rid)
    this.#ridJson = JSON.stringify(rid)
  }

  /** True when a chunk is due after this many tokens (SGLang's --stream-interval rule). */
  due(generated: number): boolean {
    const interval = this.#state.config.streamInterval
    return interval === 1 || generated % interval === 1
  }

  /**
   * One chunk's JSON. A middle chunk (neither the first nor the last) is joined from kept pieces, with the same
   * keys in the same order as the object `payload` gives: it is what a busy worker sends tens of thousands of
   * times a second.
   */
  chunk(req: SimRequest): string {
    if (this.#first || this.#steadyTail === undefined) {
      const json = JSON.stringify(this.payload(req, undefined))
      const timing = JSON.stringify(timingFields(req, this.#timing, false)).slice(1, -1)
      this.#steadyTail = `,"cached_tokens":${req.cachedTokens}${timing === '' ? '' : `,${timing}`}`
      return json
    }
    this.#out.catchUp(req.generated)
    const fields = this.#state.config.incremental
      ? this.#out.takeDeltaJson()
      : `"text":"${this.#out.textJson}","output_ids":[${this.#out.idsJson}]`
    return (
      `{${fields},"meta_info":{"id":${this.#ridJson},"finish_reason":null,"prompt_tokens":${req.promptIds.length},` +
      `"weight_version":"default","num_retractions":0,"reasoning_tokens":0,"completion_tokens":${req.generated}` +
      `${this.#steadyTail}}}`
    )
  }

  #meta(req: SimRequest, finish: FinishReason | undefined): Record<string, unknown> {
    return {
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
  }

  /** The first chunk, the last and the non-streamed body, as an object. */
  payload(req: SimRequest, finish: FinishReason | undefined): Record<string, unknown> {
    this.#out.catchUp(req.generated)
    const incremental = this.#state.config.incremental
    const delta = incremental ? this.#out.takeDelta() : undefined
    const meta = this.#meta(req, finish)
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
