import { LlmPerfError } from '../common/errors.ts'
import { request } from '../common/undici-core.ts'

/** Where the Vitest main process, which owns the launched servers and the terminal, takes requests from tests. */
export interface ControlEndpoint {
  url: string
  token: string
}

/**
 * POSTs `body` as JSON to the control endpoint and returns its JSON answer, throwing with the endpoint's
 * own error text (or the status) when it is not a 200.
 */
export async function postControl<T>(control: ControlEndpoint, path: string, body: unknown): Promise<T> {
  const res = await request(`${control.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${control.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await res.body.text()
  const json = (text === '' ? {} : JSON.parse(text)) as T & { error?: string }
  if (res.statusCode !== 200) throw new LlmPerfError('LLMPERF_TOPOLOGY', json.error ?? `HTTP ${res.statusCode}`)
  return json
}
