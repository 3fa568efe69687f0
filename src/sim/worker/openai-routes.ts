import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { epochNowMs } from '../../common/clock.ts'
import {
  endSse,
  finishInOneWrite,
  readBody,
  sendJson,
  startSse,
  unlessClientLeft,
  writeEvent,
} from '../shared/http-util.ts'
import { GenerationOutput } from './generation-stream.ts'
import type { FinishReason, SimRequest } from './sim-request.ts'
import { CHAT_TEMPLATE_TOKENS } from './sim-tokenizer.ts'
import type { WorkerState } from './worker-state.ts'

type Body = Record<string, unknown>
type Kind = 'completions' | 'chat'

/** SGLang's ErrorResponse shape for /v1 routes. */
const errorBody = (message: string, code: number): Body => ({
  object: 'error',
  message,
  type: code === 400 ? 'BadRequestError' : 'InternalServerError',
  param: null,
  code,
})

async function promptIds(state: WorkerState, kind: Kind, body: Body): Promise<number[] | string> {
  if (kind === 'completions') {
    const p = body['prompt']
    if (typeof p === 'string') return state.prompts.prompt(p)
    if (Array.isArray(p) && p.length > 0 && p.every((x) => Number.isInteger(x))) return state.prompts.prompt(p)
    return 'prompt must be a string or a list of token ids.'
  }
  const messages = body['messages']
  if (!Array.isArray(messages) || messages.length === 0) return 'messages must be a non-empty list.'
  const text = messages.map((m: unknown) => String((m as Body)?.['content'] ?? '')).join(' ')
  const ids = await state.prompts.prompt(text)
  return [...ids.slice(0, 1), ...Array.from({ length: CHAT_TEMPLATE_TOKENS }, (_, i) => 128_000 + i), ...ids.slice(1)]
}

function maxTokens(kind: Kind, body: Body): number | null {
  const v = kind === 'chat' ? (body['max_completion_tokens'] ?? body['max_tokens']) : body['max_tokens']
  if (typeof v === 'number') return v
  return kind === 'completions' ? 16 : null
}

/** SGLang's usage block; with --enable-cache-report it says how many prompt tokens the prefix cache held. */
/** SGLang's usage: `reasoning_tokens` at its top level (its UsageInfo), the reasoning's share of the answer. */
function usage(req: SimRequest, cacheReport: boolean, reasoning: number): Body {
  return {
    prompt_tokens: req.promptIds.length,
    completion_tokens: req.generated,
    total_tokens: req.promptIds.length + req.generated,
    prompt_tokens_details: cacheReport ? { cached_tokens: req.cachedTokens } : null,
    reasoning_tokens: Math.min(reasoning, req.generated),
  }
}

/**
 * /v1/completions and /v1/chat/completions. Streams start (HTTP 200) only once the first token exists,
 * as SGLang's prepend_first_chunk does, so errors before it are ordinary 4xx/5xx responses.
 */
export async function handleOpenAi(
  kind: Kind,
  state: WorkerState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const createdEpoch = epochNowMs() / 1000
  if (state.dropsConnection()) return void req.socket.destroy()
  if (!String(req.headers['content-type'] ?? '').includes('application/json'))
    return sendJson(res, 400, errorBody("Unsupported Media Type: Only 'application/json' is allowed", 400))
  let body: Body
  try {
    body = JSON.parse(await readBody(req)) as Body
  } catch (err) {
    return sendJson(res, 400, errorBody(`Invalid JSON: ${(err as Error).message}`, 400))
  }
  let ids: number[] | string | undefined
  try {
    ids = await unlessClientLeft(res, promptIds(state, kind, body))
  } catch (err) {
    return sendJson(res, 500, errorBody(`Tokenization failed: ${(err as Error).message}`, 500))
  }
  if (ids === undefined) return
  if (typeof ids === 'string') return sendJson(res, 400, errorBody(ids, 400))
  const stream = body['stream'] === true
  const includeUsage = (body['stream_options'] as Body | undefined)?.['include_usage'] === true
  const rid = typeof body['rid'] === 'string' ? body['rid'] : randomUUID().replaceAll('-', '')
  if (state.engine.has(rid)) return sendJson(res, 400, errorBody(`Duplicate request ID detected: ${rid}`, 400))
  const seq = state.keyOf(ids)
  if (state.injectsError(seq))
    return sendJson(res, 500, errorBody('Internal server error (injected by --fault-error-rate)', 500))
  const model = state.config.servedModelName
  const created = Math.floor(createdEpoch)
  const out = new GenerationOutput(state.config.seed, rid)
  const object = kind === 'chat' ? 'chat.completion.chunk' : 'text_completion'
  const chunk = (choice: Body, extra: Body = {}): Body => ({
    id: rid,
    object,
    created,
    model,
    choices: [{ index: 0, ...choice, logprobs: null }],
    usage: null,
    ...extra,
  })
  let started = false
  let done = false
  const content = (text: string): Body =>
    kind === 'chat'
      ? { delta: { content: text, reasoning_content: null }, finish_reason: null }
      : { text, finish_reason: null, matched_stop: null }
  // --reasoning-tokens N: the answer's first N tokens are reasoning, said as a reasoning parser says them
  const reasoning = state.config.reasoningTokens
  const thinking = (d: { text: string; from: number; to: number }): Body =>
    kind === 'chat'
      ? { delta: { content: null, reasoning_content: d.text }, finish_reason: null }
      : {
          text: `${d.from === 0 ? '<think>' : ''}${d.text}${d.to === reasoning ? '</think>' : ''}`,
          finish_reason: null,
          matched_stop: null,
        }
  const takeDeltas = (): Body[] => {
    const out1 = out.takeDelta(reasoning)
    const out2 = out.takeDelta()
    return [...(out1.to > out1.from ? [thinking(out1)] : []), ...(out2.text !== '' ? [content(out2.text)] : [])]
  }
  const sendDelta = (r: SimRequest): void => {
    out.catchUp(r.generated)
    if (!started) {
      started = true
      startSse(res)
      if (kind === 'chat')
        writeEvent(
          res,
          chunk({ delta: { role: 'assistant', content: '', reasoning_content: null }, finish_reason: null }),
        )
    }
    for (const c of takeDeltas()) writeEvent(res, chunk(c))
  }
  /** A whole answer: the reasoning apart (chat) or in its tags (completions), then the rest. */
  const whole = (): { reasoning: string | null; text: string } => {
    const n = Math.min(reasoning, out.length)
    if (n === 0) return { reasoning: null, text: out.text }
    return kind === 'chat'
      ? { reasoning: out.textOf(0, n), text: out.textOf(n, out.length) }
      : { reasoning: null, text: `<think>${out.textOf(0, n)}</think>${out.textOf(n, out.length)}` }
  }
  const simReq = state.newRequest({
    rid,
    seq,
    promptIds: ids,
    maxNewTokens: maxTokens(kind, body),
    ignoreEos: body['ignore_eos'] === true,
    createdEpoch,
    listener: {
      onTokens(r) {
        if (stream && r.finishedEpoch === undefined) sendDelta(r)
      },
      onFinish(r, reason: FinishReason) {
        done = true
        state.finished(r)
        const finishReason = reason.type
        if (!stream) {
          out.catchUp(r.generated)
          const w = whole()
          const choice =
            kind === 'chat'
              ? { message: { role: 'assistant', content: w.text, reasoning_content: w.reasoning, tool_calls: null } }
              : { text: w.text }
          const object = kind === 'chat' ? 'chat.completion' : 'text_completion'
          return sendJson(res, 200, {
            id: rid,
            object,
            created,
            model,
            choices: [{ index: 0, ...choice, logprobs: null, finish_reason: finishReason, matched_stop: null }],
            usage: usage(r, state.config.enableCacheReport, reasoning),
            metadata: { weight_version: 'default' },
          })
        }
        finishInOneWrite(res, () => {
          if (kind === 'chat') {
            sendDelta(r)
            writeEvent(res, chunk({ delta: {}, finish_reason: finishReason, matched_stop: null }))
          } else {
            out.catchUp(r.generated)
            if (!started) startSse(res)
            started = true
            const deltas = takeDeltas()
            for (const c of deltas.slice(0, -1)) writeEvent(res, chunk(c))
            const last = deltas.at(-1) as { text?: string } | undefined
            writeEvent(res, chunk({ text: last?.text ?? '', finish_reason: finishReason, matched_stop: null }))
          }
          if (includeUsage)
            writeEvent(res, {
              id: rid,
              object,
              created,
              model,
              choices: [],
              usage: usage(r, state.config.enableCacheReport, reasoning),
            })
          endSse(res)
        })
      },
    },
  })
  res.on('close', () => {
    if (!done) state.engine.abort(rid)
  })
  const admitted = state.engine.submit(simReq)
  if (!admitted.ok) {
    done = true
    sendJson(res, admitted.status, errorBody(admitted.message, admitted.status))
  }
}
