import { epochNowMs } from '../../common/clock.ts'
import type { BuiltBytes } from '../shared/sim-link.ts'
import { firstSentKey, type TimingContext, timingFields } from './meta-info.ts'
import type { FinishReason, SimRequest } from './sim-request.ts'
import { hashString, outputToken, outputTokenId } from './sim-tokenizer.ts'
import type { WorkerState } from './worker-state.ts'

/** Bytes that grow at the end, with room doubling: a chunk copies what it needs of them, never encodes them again. */
class GrowingBytes {
  #buf = Buffer.allocUnsafe(256)
  length = 0

  #room(n: number): void {
    if (this.length + n <= this.#buf.length) return
    const bigger = Buffer.allocUnsafe(Math.max(2 * this.#buf.length, this.length + n))
    this.#buf.copy(bigger, 0, 0, this.length)
    this.#buf = bigger
  }

  append(bytes: Buffer): void {
    this.#room(bytes.length)
    this.length += bytes.copy(this.#buf, this.length)
  }

  /** ASCII text (digits and commas), written in place. */
  appendAscii(text: string): void {
    this.#room(text.length)
    this.length += this.#buf.write(text, this.length, 'latin1')
  }

  copyTo(target: Buffer, at: number): number {
    return at + this.#buf.copy(target, at, 0, this.length)
  }
}

/** A token's text as a JSON string's contents, in UTF-8: the simulated vocabulary is small, so each is made once. */
const TOKEN_JSON = new Map<string, Buffer>()
const tokenJson = (text: string): Buffer => {
  let bytes = TOKEN_JSON.get(text)
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(text).slice(1, -1))
    TOKEN_JSON.set(text, bytes)
  }
  return bytes
}

/**
 * Output accumulated for one request, and what has been sent of it. Beside the ids it keeps their JSON forms and
 * the text's in UTF-8, grown a token at a time: a chunk of SGLang's default /generate stream, which repeats all the
 * text so far, then costs a copy of bytes instead of serialising (and encoding) the whole output again. The text
 * itself and the ids are made when asked (a body, an OpenAI delta) from the tokens, which are deterministic: a
 * string grown a token at a time is a chain of hundreds of pieces per request, and it and a growing array of ids
 * are what every young-generation GC copied (a wave of 128 answers of 512 tokens took scavenges of 11–14 ms).
 */
export class GenerationOutput {
  /** The text as a JSON string's contents (escaped, no quotes), UTF-8. */
  readonly textJson = new GrowingBytes()
  /** The ids as a JSON array's contents (no brackets). */
  readonly idsJson = new GrowingBytes()
  /** Tokens materialised. */
  length = 0
  sentIds = 0
  readonly #seed: number
  readonly #hash: number
  /** Tokens of reasoning whose text carries its tags (a /generate answer: the model's own text, <think> and all). */
  readonly #thinkTags: number

  constructor(seed: number, rid: string, thinkTags = 0) {
    this.#seed = seed
    this.#hash = hashString(rid)
    this.#thinkTags = thinkTags
  }

  /** The text of the tokens materialised so far. */
  get text(): string {
    return this.#textOf(0, this.length)
  }

  /** The ids of the tokens materialised so far. */
  get ids(): number[] {
    return this.#idsOf(0, this.length)
  }

  /** Materialises tokens up to `generated`. */
  catchUp(generated: number): void {
    while (this.length < generated) {
      const t = outputToken(this.#seed, this.#hash, this.length)
      this.idsJson.appendAscii(this.length === 0 ? String(t.id) : `,${t.id}`)
      this.textJson.append(tokenJson(this.#tagged(this.length, t.text)))
      this.length++
    }
  }

  /** Text and ids since the last call, for incremental streaming; with `upTo`, of the tokens before it only. */
  takeDelta(upTo = Number.POSITIVE_INFINITY): { text: string; ids: number[]; from: number; to: number } {
    const from = this.sentIds
    const to = Math.max(from, Math.min(this.length, upTo))
    const delta = { text: this.#textOf(from, to), ids: this.#idsOf(from, to), from, to }
    this.sentIds = to
    return delta
  }

  /** The text of tokens [from, to). */
  textOf(from: number, to: number): string {
    return this.#textOf(from, Math.min(to, this.length))
  }

  #idsOf(from: number, to: number): number[] {
    const ids: number[] = []
    for (let p = from; p < to; p++) ids.push(outputTokenId(this.#seed, this.#hash, p))
    return ids
  }

  #textOf(from: number, to: number): string {
    let text = ''
    for (let p = from; p < to; p++) text += this.#tagged(p, outputToken(this.#seed, this.#hash, p).text)
    return text
  }

  /** Token `p`'s text, opening the reasoning at its first token and closing it at its last where tags are asked. */
  #tagged(p: number, text: string): string {
    if (p >= this.#thinkTags) return text
    return `${p === 0 ? '<think>' : ''}${text}${p === this.#thinkTags - 1 ? '</think>' : ''}`
  }
}

const TEXT_OPEN = Buffer.from('data: {"text":"')
const IDS_OPEN = Buffer.from('","output_ids":[')

const EMPTY = Buffer.alloc(0)

/**
 * An event of the cumulative /generate stream (`data: {"text":…,"output_ids":[…],"meta_info":{…}}` and the blank
 * line), as bytes copied together from what is kept of the output: the text and ids so far, then the meta's bytes
 * (`head`, completion_tokens as `count`, `tail`: a middle chunk's head and tail are the same from the second chunk
 * to the last but one; the first and last chunks' meta is all head).
 */
class CumulativeChunk implements BuiltBytes {
  readonly #out: GenerationOutput
  readonly #head: Buffer
  readonly #tail: Buffer
  /** completion_tokens, as text. */
  count = ''

  constructor(out: GenerationOutput, head: Buffer, tail = EMPTY) {
    this.#out = out
    this.#head = head
    this.#tail = tail
  }

  get length(): number {
    const out = this.#out
    return (
      TEXT_OPEN.length +
      out.textJson.length +
      IDS_OPEN.length +
      out.idsJson.length +
      this.#head.length +
      this.count.length +
      this.#tail.length
    )
  }

  writeInto(event: Buffer, from: number): void {
    let at = from + TEXT_OPEN.copy(event, from)
    at = this.#out.textJson.copyTo(event, at)
    at += IDS_OPEN.copy(event, at)
    at = this.#out.idsJson.copyTo(event, at)
    at += this.#head.copy(event, at)
    at += event.write(this.count, at, 'latin1')
    this.#tail.copy(event, at)
  }
}

/** Builds /generate payloads (chunks and the non-streamed body) in SGLang's shape. */
export class GeneratePayloads {
  readonly #state: WorkerState
  readonly #timing: TimingContext
  readonly #out: GenerationOutput
  readonly #ridJson: string
  #first = true
  /** Every chunk from the second to the last but one: made with the first. */
  #steady: CumulativeChunk | undefined

  constructor(state: WorkerState, rid: string, dispatchedEpoch: number) {
    this.#state = state
    this.#timing = {
      format: state.config.timestampFormat,
      enableMetrics: state.config.enableMetrics,
      dispatchedEpoch,
      firstSentEpoch: undefined,
    }
    // --reasoning-tokens N: /generate has no reasoning parser (SGLang applies its --reasoning-parser to /v1 chat
    // only), so the model's own text carries the reasoning in its tags
    this.#out = new GenerationOutput(state.config.seed, rid, state.config.reasoningTokens)
    this.#ridJson = JSON.stringify(rid)
  }

  /** True when a chunk is due after this many tokens (SGLang's --stream-interval rule). */
  due(generated: number): boolean {
    const interval = this.#state.config.streamInterval
    return interval === 1 || generated % interval === 1
  }

  /**
   * One chunk as its SSE event (`data: …` and the blank line). A middle chunk of the default cumulative stream
   * (neither the first nor the last) is copied together from kept bytes, with the same keys in the same order as
   * the object `payload` gives: it is what a busy worker sends tens of thousands of times a second. Its bytes are
   * written straight into the chunk that carries them (BuiltBytes), with no buffer of their own.
   */
  chunk(req: SimRequest): string | BuiltBytes {
    if (this.#first || this.#steady === undefined) {
      const event = this.event(req, undefined)
      const timing = JSON.stringify(timingFields(req, this.#timing, false)).slice(1, -1)
      const head = Buffer.from(
        `],"meta_info":{"id":${this.#ridJson},"finish_reason":null,"prompt_tokens":${req.promptIds.length},` +
          '"weight_version":"default","num_retractions":0,"reasoning_tokens":0,"completion_tokens":',
      )
      const tail = Buffer.from(
        `,"cached_tokens":${req.cachedTokens}${timing === '' ? '' : `,${timing}`}}}\n\n`,
        'latin1',
      )
      this.#steady = new CumulativeChunk(this.#out, head, tail)
      return event
    }
    if (this.#state.config.incremental) return this.event(req, undefined)
    this.#out.catchUp(req.generated)
    this.#steady.count = String(req.generated)
    return this.#steady
  }

  /**
   * The first chunk or the last as its SSE event: in the default cumulative stream, the kept text and ids with
   * the meta serialised (a 500-token answer's last event is ~7 KB, and JSON of the whole object cost a busy worker
   * more than the rest of finishing the request); incremental, the delta's JSON.
   */
  event(req: SimRequest, finish: FinishReason | undefined): string | BuiltBytes {
    if (this.#state.config.incremental) return `data: ${JSON.stringify(this.payload(req, finish))}\n\n`
    this.#out.catchUp(req.generated)
    return new CumulativeChunk(
      this.#out,
      Buffer.from(`],"meta_info":${JSON.stringify(this.#metaOf(req, finish))}}\n\n`),
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
      // speculative decoding on: the verifies so far, as SGLang's meta_info says them (first and last chunks)
      ...(this.#state.config.speculativeAcceptLength > 1 ? { spec_verify_ct: req.specVerifyCt } : {}),
      ...timingFields(req, this.#timing, finish !== undefined),
    }
  }

  /** The non-streamed body, or an incremental stream's first and last chunks, as an object. */
  payload(req: SimRequest, finish: FinishReason | undefined): Record<string, unknown> {
    this.#out.catchUp(req.generated)
    const delta = this.#state.config.incremental ? this.#out.takeDelta() : undefined
    const meta = this.#metaOf(req, finish)
    return { text: delta?.text ?? this.#out.text, output_ids: delta?.ids ?? this.#out.ids, meta_info: meta }
  }

  /** meta_info of the first chunk, the last or the body: the first sent carries the instant it was sent. */
  #metaOf(req: SimRequest, finish: FinishReason | undefined): Record<string, unknown> {
    const meta = this.#meta(req, finish)
    if (this.#first) {
      this.#first = false
      const sent = epochNowMs() / 1000
      this.#timing.firstSentEpoch = sent
      meta[firstSentKey(this.#timing.format)] = sent
    }
    if (finish !== undefined) meta['e2e_latency'] = (req.finishedEpoch ?? epochNowMs() / 1000) - req.createdEpoch
    return meta
  }
}
