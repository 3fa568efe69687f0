import type { IncomingMessage, ServerResponse } from 'node:http'
import { readBody, sendJson } from '../shared/http-util.ts'
import type { WorkerState } from './worker-state.ts'

type Body = Record<string, unknown>

/** SGLang's ErrorResponse for a request it cannot validate. */
const invalid = (res: ServerResponse, message: string): void =>
  sendJson(res, 400, { object: 'error', message, type: 'BadRequestError', param: null, code: 400 })

/**
 * POST /tokenize and /v1/tokenize as SGLang serves them: `{prompt, add_special_tokens = true}` (a string or a
 * list of them) → `{tokens, count, max_model_len}`; POST /detokenize and /v1/detokenize: `{tokens}` → `{text}`.
 */
export async function handleTokenize(
  kind: 'tokenize' | 'detokenize',
  state: WorkerState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  let body: Body
  try {
    body = JSON.parse(await readBody(req)) as Body
  } catch (err) {
    return invalid(res, `Invalid request body: ${(err as Error).message}`)
  }
  if (kind === 'detokenize') {
    const tokens = body['tokens']
    if (!Array.isArray(tokens) || !tokens.every((t) => Number.isInteger(t)))
      return invalid(res, 'tokens must be a list of integers.')
    return sendJson(res, 200, { text: await state.prompts.decode(tokens as number[]) })
  }
  const prompt = body['prompt']
  const special = body['add_special_tokens'] !== false
  const maxModelLen = state.config.profile.contextLength
  if (typeof prompt === 'string') {
    const tokens = await state.prompts.encode(prompt, special)
    return sendJson(res, 200, { tokens, count: tokens.length, max_model_len: maxModelLen })
  }
  if (Array.isArray(prompt) && prompt.every((p) => typeof p === 'string')) {
    const tokens = await Promise.all((prompt as string[]).map((p) => state.prompts.encode(p, special)))
    return sendJson(res, 200, { tokens, count: tokens.map((t) => t.length), max_model_len: maxModelLen })
  }
  return invalid(res, 'prompt must be a string or a list of strings.')
}
