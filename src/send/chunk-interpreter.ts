import { addTokens, type Observation } from './observation.ts'
import type { Api } from './request-body.ts'
import { collectTiming } from './server-timing-keys.ts'

/** A 200 response whose payload says it failed: an error chunk, or a server abort. */
export class PayloadError extends Error {
  override name = 'PayloadError'
}

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

function errorMessage(payload: Json): string | undefined {
  const err = payload['error']
  if (isObject(err)) return String(err['message'] ?? JSON.stringify(err))
  if (typeof err === 'string') return err
  if (payload['object'] === 'error') return String(payload['message'] ?? 'error')
  return undefined
}

/**
 * Applies one parsed payload (an SSE event's JSON, or a whole non-streamed body) to the observation.
 * Token counts come from the server (meta_info.completion_tokens, usage), never from chunk counts, except
 * that on /v1 streams each content chunk is timed as one token until usage arrives.
 */
export function interpretPayload(api: Api, payload: unknown, obs: Observation, atMs: number): void {
  if (!isObject(payload)) throw new PayloadError(`expected a JSON object, got ${JSON.stringify(payload).slice(0, 80)}`)
  const message = errorMessage(payload)
  if (message !== undefined) throw new PayloadError(`server error in response: ${message}`)
  obs.chunks++
  if (api === 'generate') interpretGenerate(payload, obs, atMs)
  else interpretOpenAi(payload, obs, atMs)
}

function interpretGenerate(payload: Json, obs: Observation, atMs: number): void {
  const meta = isObject(payload['meta_info']) ? payload['meta_info'] : {}
  const text = payload['text']
  if (typeof text === 'string' && text.length > 0) obs.hasGeneratedText = true
  // SGLang's /generate repeats all text so far in each chunk, unless its server streams increments
  // (--incremental-streaming-output): a chunk that does not begin with what came before is a new piece
  if (obs.answer !== undefined && typeof text === 'string')
    obs.answer = text.startsWith(obs.answer) ? text : obs.answer + text
  const ids = payload['output_ids']
  if (obs.answerIds !== undefined && Array.isArray(ids)) {
    const before = obs.answerIds
    const repeats = ids.length >= before.length && before.every((id, i) => ids[i] === id)
    obs.answerIds = repeats ? (ids as number[]) : [...before, ...(ids as number[])]
  }
  const tokensBefore = obs.completionTokens ?? 0
  const total = num(meta['completion_tokens'])
  if (total !== undefined) {
    addTokens(obs, total - (obs.completionTokens ?? 0), atMs)
    obs.completionTokens = total
  }
  if (typeof text === 'string' && obs.thinkText !== undefined) generateThink(obs, text, tokensBefore, atMs)
  // a server that counts the reasoning itself is taken at its word (a 0 is a server that does not count it)
  const counted = num(meta['reasoning_tokens'])
  if (counted !== undefined && counted > 0) obs.reasoningTokens = counted
  obs.promptTokens = num(meta['prompt_tokens']) ?? obs.promptTokens
  obs.cachedTokens = num(meta['cached_tokens']) ?? obs.cachedTokens
  obs.specVerifyCt = num(meta['spec_verify_ct']) ?? obs.specVerifyCt
  obs.specAcceptLength = num(meta['spec_accept_length']) ?? obs.specAcceptLength
  collectTiming(meta, obs.serverTiming)
  const finish = meta['finish_reason']
  if (isObject(finish)) {
    obs.finishReason = String(finish['type'])
    if (finish['type'] === 'abort') {
      const status = num(finish['status_code'])
      throw new PayloadError(
        `aborted by the server${status !== undefined ? ` (${status})` : ''}: ${String(finish['message'] ?? '')}`,
      )
    }
  }
}

/**
 * <think>…</think> in /generate's text (SGLang applies its --reasoning-parser to /v1 chat only, so a reasoning
 * model's own text carries its tags here): the reasoning's tokens are the chunks' tokens up to the one that closes
 * it, and the answer begins at the first text after it (or at the first text, where it opens with none). The text is
 * kept only until then.
 */
function generateThink(obs: Observation, text: string, tokensBefore: number, atMs: number): void {
  const before = obs.thinkText ?? ''
  const all = text.startsWith(before) ? text : before + text
  if (all.length === before.length) return
  if (obs.think === 'unknown') {
    const head = all.trimStart()
    // not yet known: nothing but space, or the first characters of an opening tag
    if (head === '' || (head.length < '<think>'.length && '<think>'.startsWith(head))) {
      obs.thinkText = all
      return
    }
    obs.think = head.startsWith('<think>') ? 'inside' : 'after'
  }
  if (obs.think === 'inside') {
    const end = all.indexOf('</think>')
    if (end === -1) {
      obs.thinkText = all
      obs.reasoningTokens = obs.completionTokens ?? tokensBefore
      return
    }
    obs.think = 'after'
    const answer = all.slice(end + '</think>'.length).trim() !== ''
    // a chunk that closes the reasoning and begins the answer: at SGLang's default stream interval (a token a chunk)
    // its token is the answer's; a chunk of several tokens (a larger interval, a body not streamed) is split by the
    // share of its new text before the tag's end, the only measure of it the response gives
    const tokens = (obs.completionTokens ?? tokensBefore) - tokensBefore
    const fresh = all.length - before.length
    const share = fresh > 0 ? Math.max(0, end + '</think>'.length - before.length) / fresh : 1
    obs.reasoningTokens = !answer
      ? (obs.completionTokens ?? tokensBefore)
      : tokens <= 1
        ? tokensBefore
        : tokensBefore + Math.round(tokens * share)
    if (!answer) {
      obs.thinkText = all
      return
    }
  } else if (all.slice(before.length).trim() === '' && obs.reasoningTokens !== undefined) {
    // the space between the reasoning and the answer
    obs.thinkText = all
    return
  }
  obs.reasoningTokens ??= 0
  obs.firstAnswerMs ??= atMs
  obs.thinkText = undefined
}

function interpretOpenAi(payload: Json, obs: Observation, atMs: number): void {
  const choices = Array.isArray(payload['choices']) ? payload['choices'] : []
  const choice: unknown = choices[0]
  if (isObject(choice)) {
    const delta = isObject(choice['delta']) ? choice['delta'] : isObject(choice['message']) ? choice['message'] : choice
    const content = [delta['content'], delta['reasoning_content'], delta['text']].find(
      (c) => typeof c === 'string' && c.length > 0,
    )
    if (content !== undefined) {
      obs.hasGeneratedText = true
      addTokens(obs, 1, atMs)
      if (obs.answer !== undefined && typeof delta['content'] === 'string') obs.answer += delta['content']
      else if (obs.answer !== undefined && typeof delta['text'] === 'string') obs.answer += delta['text']
    }
    const reasoning = delta['reasoning_content']
    if (typeof reasoning === 'string' && reasoning.length > 0) obs.reasoningTokens = (obs.reasoningTokens ?? 0) + 1
    const text = [delta['content'], delta['text']].find((c): c is string => typeof c === 'string' && c.length > 0)
    if (text !== undefined) answerText(obs, text, atMs)
    if (typeof choice['finish_reason'] === 'string') obs.finishReason = choice['finish_reason']
    if (choice['finish_reason'] === 'abort' || choice['finish_reason'] === 'error')
      throw new PayloadError(
        `${choice['finish_reason'] === 'abort' ? 'aborted by the server' : 'failed in the server'} ` +
          `(finish_reason "${choice['finish_reason']}")`,
      )
  }
  const timings = payload['timings']
  if (isObject(timings)) {
    // llama.cpp's speculative counts so far (newer servers send timings with every chunk, older with the last)
    obs.draftTokens = num(timings['draft_n']) ?? obs.draftTokens
    obs.draftAccepted = num(timings['draft_n_accepted']) ?? obs.draftAccepted
  }
  const usage = payload['usage']
  if (isObject(usage)) {
    // the server's own count wins over the chunks seen: SGLang's usage.reasoning_tokens, OpenAI's
    // completion_tokens_details.reasoning_tokens (a 0 where reasoning was seen is a server that does not count it)
    const completion = usage['completion_tokens_details']
    const counted =
      num(usage['reasoning_tokens']) ?? (isObject(completion) ? num(completion['reasoning_tokens']) : undefined)
    if (counted !== undefined && (counted > 0 || obs.reasoningTokens === undefined)) obs.reasoningTokens = counted
    obs.promptTokens = num(usage['prompt_tokens']) ?? obs.promptTokens
    obs.completionTokens = num(usage['completion_tokens']) ?? obs.completionTokens
    const details = usage['prompt_tokens_details']
    if (isObject(details)) obs.cachedTokens = num(details['cached_tokens']) ?? obs.cachedTokens
    // llama.cpp's server says how many prompt tokens it evaluated (timings.prompt_n): the rest came from its cache
    const evaluated = isObject(timings) ? num(timings['prompt_n']) : undefined
    if (isObject(timings)) obs.serverPrefillMs = num(timings['prompt_ms']) ?? obs.serverPrefillMs
    const prompt = num(usage['prompt_tokens'])
    if (!isObject(details) && evaluated !== undefined && prompt !== undefined && evaluated <= prompt)
      obs.cachedTokens = prompt - evaluated
  }
}

/**
 * Text of a /v1 answer: reasoning while it is inside <think>…</think> (as a model without SGLang's
 * --reasoning-parser sends it), the answer from the first text after it, or from the first text where it opens with
 * none. A chunk that closes the reasoning and begins the answer begins it.
 */
function answerText(obs: Observation, text: string, atMs: number): void {
  if (obs.think === 'unknown') obs.think = text.trimStart().startsWith('<think>') ? 'inside' : 'after'
  if (obs.think === 'inside') {
    obs.reasoningTokens = (obs.reasoningTokens ?? 0) + 1
    const end = text.indexOf('</think>')
    if (end === -1) return
    obs.think = 'after'
    if (text.slice(end + '</think>'.length).trim() === '') return
  }
  obs.firstAnswerMs ??= atMs
}
