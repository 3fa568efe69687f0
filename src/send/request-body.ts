import type { DatasetItem } from '../dataset/dataset-item.ts'

export type Api = 'generate' | 'completions' | 'chat'

export interface BodyOptions {
  api: Api
  stream: boolean
  model: string | undefined
  temperature: number
  extraBody: Record<string, unknown>
}

export const API_PATHS: Record<Api, string> = {
  generate: '/generate',
  completions: '/v1/completions',
  chat: '/v1/chat/completions',
}

/**
 * The request body per API, as SGLang's bench_serving sends it: the output length is enforced with
 * max_new_tokens / max_tokens plus ignore_eos, and /v1 streams ask for the usage chunk so token counts
 * come from the server. `rid` makes the server's request id ours, so server logs can be joined to the CSV.
 */
export function requestBody(item: DatasetItem, reqId: string, opts: BodyOptions): Record<string, unknown> {
  if (opts.api === 'generate') {
    const input = typeof item.prompt === 'string' ? { text: item.prompt } : { input_ids: item.prompt }
    return {
      ...input,
      rid: reqId,
      stream: opts.stream,
      sampling_params: { max_new_tokens: item.outputLen, ignore_eos: true, temperature: opts.temperature },
      ...opts.extraBody,
    }
  }
  const common = {
    model: opts.model ?? 'default',
    stream: opts.stream,
    temperature: opts.temperature,
    ignore_eos: true,
    rid: reqId,
    ...(opts.stream ? { stream_options: { include_usage: true } } : {}),
  }
  if (opts.api === 'completions')
    return { ...common, prompt: item.prompt, max_tokens: item.outputLen, ...opts.extraBody }
  return {
    ...common,
    messages: item.messages ?? [{ role: 'user', content: item.prompt }],
    max_tokens: item.outputLen,
    ...opts.extraBody,
  }
}
