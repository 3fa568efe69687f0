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
  writeSse,
} from '../shared/http-util.ts'
import { GeneratePayloads } from './generation-stream.ts'
import type { FinishReason } from './sim-request.ts'
import type { WorkerState } from './worker-state.ts'

type Body = Record<string, unknown>

/** SGLang's GenerateReqInput checks, in its words where we know them. */
function validate(body: Body): string | undefined {
  const inputs = ['text', 'input_ids', 'input_embeds'].filter((k) => body[k] !== undefined)
  if (inputs.length !== 1) return 'Either text, input_ids or input_embeds should be provided.'
  if (Array.isArray(body['text']) || (Array.isArray(body['input_ids']) && Array.isArray(body['input_ids'][0])))
    return 'Batch requests are not supported by the simulator; send one prompt per request.'
  if (body['input_embeds'] !== undefined) return 'input_embeds is not supported by the simulator.'
  if (body['text'] !== undefined && typeof body['text'] !== 'string') return 'text must be a string.'
  const ids = body['input_ids']
  if (ids !== undefined && (!Array.isArray(ids) || ids.length === 0 || !ids.every((x) => Number.isInteger(x))))
    return 'input_ids must be a non-empty list of integers.'
  const sp = body['sampling_params']
  if (sp !== undefined && (typeof sp !== 'object' || sp === null)) return 'sampling_params must be an object.'
  const max = (sp as Body | undefined)?.['max_new_tokens']
  if (max !== undefined && max !== null && (!Number.isInteger(max) || (max as number) < 0))
    return 'max_new_tokens must be a non-negative integer.'
  return undefined
}

/** POST /generate: streamed (headers at once, as Starlette sends them) or a single JSON body. */
export async function handleGenerate(state: WorkerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const createdEpoch = epochNowMs() / 1000
  if (state.dropsConnection()) return void req.socket.destroy()
  let body: Body
  try {
    body = JSON.parse(await readBody(req)) as Body
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('expected an object')
  } catch (err) {
    return sendJson(res, 400, { error: { message: `Invalid request body: ${(err as Error).message}` } })
  }
  const stream = body['stream'] === true
  const rid = typeof body['rid'] === 'string' ? body['rid'] : randomUUID().replaceAll('-', '')
  const fail = (status: number, message: string): void => {
    if (stream) {
      writeEvent(res, {
        error: {
          message,
          type: status === 400 ? 'invalid_request_error' : 'internal_server_error',
          code: status,
          retryable: status !== 400,
        },
      })
      endSse(res)
    } else if (status === 400) sendJson(res, 400, { error: { message } })
    else sendJson(res, status, { detail: message })
  }
  if (stream) startSse(res)
  const problem = validate(body) ?? (state.engine.has(rid) ? `Duplicate request ID detected: ${rid}` : undefined)
  if (problem !== undefined) return fail(400, problem)
  const sp = (body['sampling_params'] ?? {}) as Body
  let promptIds: number[] | undefined
  try {
    promptIds = await unlessClientLeft(
      res,
      state.prompts.prompt(typeof body['text'] === 'string' ? body['text'] : (body['input_ids'] as number[])),
    )
  } catch (err) {
    return fail(500, `Tokenization failed: ${(err as Error).message}`)
  }
  if (promptIds === undefined) return
  if (state.engine.has(rid)) return fail(400, `Duplicate request ID detected: ${rid}`)
  const seq = state.keyOf(promptIds)
  if (state.injectsError(seq)) return fail(500, 'Internal server error (injected by --fault-error-rate)')
  const payloads = new GeneratePayloads(state, rid, epochNowMs() / 1000)
  let done = false
  const simReq = state.newRequest({
    rid,
    seq,
    promptIds,
    maxNewTokens: sp['max_new_tokens'] === null ? null : ((sp['max_new_tokens'] as number | undefined) ?? 128),
    ignoreEos: sp['ignore_eos'] === true,
    createdEpoch,
    listener: {
      onTokens(r) {
        if (stream && r.finishedEpoch === undefined && payloads.due(r.generated)) writeSse(res, payloads.chunk(r))
      },
      onFinish(r, reason: FinishReason) {
        done = true
        state.finished(r)
        if (stream)
          finishInOneWrite(res, () => {
            writeSse(res, payloads.event(r, reason))
            endSse(res)
          })
        else sendJson(res, 200, payloads.payload(r, reason))
      },
    },
  })
  res.on('close', () => {
    if (!done) state.engine.abort(rid)
  })
  const admitted = state.engine.submit(simReq)
  if (admitted.ok) return
  done = true
  if (stream && admitted.status === 503) {
    writeEvent(res, {
      text: '',
      output_ids: [],
      meta_info: {
        id: rid,
        finish_reason: { type: 'abort', message: admitted.message, status_code: 503 },
        prompt_tokens: promptIds.length,
        completion_tokens: 0,
        cached_tokens: 0,
      },
    })
    endSse(res)
  } else fail(admitted.status, admitted.message)
}
