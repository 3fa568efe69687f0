import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import type { StartedServer } from '../src/launch/started-server.ts'
import { startSimWorker } from './helpers/sim.ts'

async function post(url: string, path: string, body: unknown): Promise<{ status: number; type: string; text: string }> {
  const res = await request(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.statusCode, type: String(res.headers['content-type']), text: await res.body.text() }
}

/**
 * Resolves once the worker's /get_load shows `reached` of its running and waiting requests: what a request sent before
 * has reached, read from the worker rather than guessed from a wait (which a busy machine can outrun).
 */
async function loadReaches(url: string, reached: (running: number, waiting: number) => boolean): Promise<void> {
  await vi.waitUntil(
    async () => {
      const load = (await (await request(`${url}/get_load`)).body.json()) as {
        loads: Array<{ num_running_reqs: number; num_waiting_reqs: number }>
      }
      const l = load.loads[0]
      return l !== undefined && reached(l.num_running_reqs, l.num_waiting_reqs)
    },
    { timeout: 10_000, interval: 2, message: 'the worker never reached that load' },
  )
}

const events = (text: string): string[] => text.split('\n\n').filter((e) => e !== '')
const payloads = (text: string): Array<Record<string, any>> =>
  events(text)
    .filter((e) => e !== 'data: [DONE]')
    .map((e) => JSON.parse(e.slice('data: '.length)))
const gen = (extra: Record<string, unknown> = {}) => ({
  text: 'the quick brown fox',
  stream: true,
  sampling_params: { max_new_tokens: 3, ignore_eos: true },
  ...extra,
})

describe('sim-server with --enable-metrics', () => {
  let w: StartedServer
  beforeAll(async () => {
    w = await startSimWorker(['--enable-metrics', '--random-seed', '7', '--speed', '4'])
  })
  afterAll(() => w.stop())

  test('/generate streams `data: <json>\\n\\n` events of cumulative text, then `data: [DONE]`', async () => {
    const res = await post(w.url, '/generate', gen())
    expect(res.status).toBe(200)
    expect(res.type).toBe('text/event-stream')
    const ev = events(res.text)
    expect(ev).toHaveLength(4)
    expect(ev.every((e) => e.startsWith('data: '))).toBe(true)
    expect(ev.at(-1)).toBe('data: [DONE]')
    const [a, b, c] = payloads(res.text)
    expect(b?.text.startsWith(a?.text)).toBe(true)
    expect(c?.text.startsWith(b?.text)).toBe(true)
    expect(c?.output_ids).toHaveLength(3)
    expect([a, b, c].map((p) => p?.meta_info.completion_tokens)).toEqual([1, 2, 3])
  })

  test('meta_info: SGLang’s keys, timing fields on every chunk, end keys on the last, first-sent stamp on the first', async () => {
    const [first, , last] = payloads((await post(w.url, '/generate', gen())).text)
    for (const key of [
      'id',
      'finish_reason',
      'prompt_tokens',
      'completion_tokens',
      'cached_tokens',
      'weight_version',
      'queue_time',
      'forward_entry_time',
      'prefill_finished_time',
    ]) {
      expect(first?.meta_info, key).toHaveProperty(key)
    }
    expect(first?.meta_info.finish_reason).toBeNull()
    expect(first?.meta_info).toHaveProperty('response_sent_to_client_ts')
    expect(first?.meta_info).not.toHaveProperty('e2e_latency')
    expect(last?.meta_info.finish_reason).toEqual({ type: 'length', length: 3 })
    for (const key of [
      'e2e_latency',
      'request_received_ts',
      'api_server_dispatch_finish_ts',
      'request_finished_ts',
      'decode_throughput',
    ])
      expect(last?.meta_info, key).toHaveProperty(key)
    const m = last?.meta_info
    expect(m.forward_entry_time - m.queue_time).toBeGreaterThanOrEqual(m.request_received_ts - 1e-6)
    expect(m.prefill_finished_time).toBeGreaterThan(m.forward_entry_time)
    expect(m.request_finished_ts).toBeGreaterThanOrEqual(m.prefill_finished_time)
  })

  test('non-streaming /generate answers one JSON object', async () => {
    const res = await post(w.url, '/generate', gen({ stream: false }))
    const body = JSON.parse(res.text)
    expect(res.type).toBe('application/json')
    expect(body.output_ids).toHaveLength(3)
    expect(body.meta_info.completion_tokens).toBe(3)
    expect(body.meta_info).toHaveProperty('e2e_latency')
  })

  test('errors as SGLang gives them: a 400 body, or a 200 stream carrying the error chunk', async () => {
    expect(await post(w.url, '/generate', { stream: false })).toMatchObject({
      status: 400,
      text: '{"error":{"message":"Either text, input_ids or input_embeds should be provided."}}',
    })
    const streamed = await post(w.url, '/generate', { stream: true })
    expect(streamed.status).toBe(200)
    expect(streamed.text).toBe(
      'data: {"error":{"message":"Either text, input_ids or input_embeds should be provided.","type":"invalid_request_error","code":400,"retryable":false}}\n\ndata: [DONE]\n\n',
    )
  })

  test('a duplicate in-flight rid is rejected', async () => {
    const slow = post(
      w.url,
      '/generate',
      gen({ rid: 'same', stream: false, sampling_params: { max_new_tokens: 600, ignore_eos: true } }),
    )
    await loadReaches(w.url, (running, waiting) => running + waiting === 1)
    const dup = await post(w.url, '/generate', gen({ rid: 'same', stream: false }))
    expect(dup).toMatchObject({ status: 400, text: '{"error":{"message":"Duplicate request ID detected: same"}}' })
    expect((await slow).status).toBe(200)
  })

  test('/v1/chat/completions: role chunk, deltas, a separate finish chunk, the usage chunk with choices: []', async () => {
    const res = await post(w.url, '/v1/chat/completions', {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
      stream: true,
      ignore_eos: true,
      stream_options: { include_usage: true },
    })
    const p = payloads(res.text)
    expect(p[0]?.choices[0].delta).toEqual({ role: 'assistant', content: '', reasoning_content: null })
    expect(
      p.slice(1, 3).every((c) => typeof c.choices[0].delta.content === 'string' && c.choices[0].delta.content !== ''),
    ).toBe(true)
    expect(p[3]?.choices[0]).toMatchObject({ delta: {}, finish_reason: 'length' })
    expect(p[4]).toMatchObject({ choices: [], usage: { completion_tokens: 2 } })
    expect(events(res.text).at(-1)).toBe('data: [DONE]')
  })

  test('/v1/completions: text deltas, finish_reason on the last content chunk', async () => {
    const p = payloads(
      (
        await post(w.url, '/v1/completions', {
          model: 'm',
          prompt: 'hi there',
          max_tokens: 3,
          stream: true,
          ignore_eos: true,
        })
      ).text,
    )
    expect(p).toHaveLength(3)
    expect(p.map((c) => c.choices[0].finish_reason)).toEqual([null, null, 'length'])
    expect(p.every((c) => c.object === 'text_completion' && c.usage === null)).toBe(true)
  })

  test('/metrics shows the sglang:* series', async () => {
    const text = await (await request(`${w.url}/metrics`)).body.text()
    for (const name of [
      'sglang:num_running_reqs',
      'sglang:num_queue_reqs',
      'sglang:queue_time_seconds_bucket',
      'sglang:time_to_first_token_seconds_bucket',
      'sglang:inter_token_latency_seconds_bucket',
      'sglang:e2e_request_latency_seconds_bucket',
      'sglang:prompt_tokens_total',
      'sglang:generation_tokens_total',
      'sglang:num_requests_total',
    ]) {
      expect(text, name).toContain(name)
    }
  })

  test('info routes: /model_info, /server_info and their old names, /v1/models, /v1/loads', async () => {
    for (const path of ['/model_info', '/get_model_info'])
      expect(JSON.parse(await (await request(`${w.url}${path}`)).body.text())).toMatchObject({ is_generation: true })
    for (const path of ['/server_info', '/get_server_info'])
      expect(JSON.parse(await (await request(`${w.url}${path}`)).body.text())).toMatchObject({
        enable_metrics: true,
        random_seed: 7,
      })
    expect(JSON.parse(await (await request(`${w.url}/v1/models`)).body.text()).data[0].id).toBe('sim/llama-3.1-8b-h100')
    expect(JSON.parse(await (await request(`${w.url}/v1/loads`)).body.text()).loads[0]).toHaveProperty(
      'num_waiting_reqs',
    )
  })

  test('/flush_cache answers 200 when idle, on GET and POST', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const res = await request(`${w.url}/flush_cache`, { method })
      expect(res.statusCode).toBe(200)
      expect(await res.body.text()).toMatch(/^Cache flushed\./u)
    }
  })
})

test('without --enable-metrics: no /metrics and no timing fields, but response_sent_to_client_ts on the first chunk', async () => {
  const w = await startSimWorker(['--speed', '4'])
  try {
    expect((await request(`${w.url}/metrics`)).statusCode).toBe(404)
    const [first, last] = payloads(
      (await post(w.url, '/generate', gen({ sampling_params: { max_new_tokens: 2, ignore_eos: true } }))).text,
    )
    expect(Object.keys(first?.meta_info)).toContain('response_sent_to_client_ts')
    expect(Object.keys(last?.meta_info)).not.toContain('queue_time')
    expect(Object.keys(last?.meta_info)).toContain('e2e_latency')
  } finally {
    await w.stop()
  }
})

test.each([
  [
    'v0.5.5',
    ['queue_time', 'prefill_delay', 'prefill_latency'],
    ['request_received_ts', 'request_scheduled_ts', 'prefill_finished_ts', 'decode_finished_ts', 'forward_time'],
  ],
  [
    'v0.5.6',
    ['queue_time', 'prefill_launch_delay', 'prefill_launch_latency', 'prefill_finished_ts'],
    ['request_received_ts', 'request_sent_to_scheduler_ts', 'decode_finished_ts', 'inference_time'],
  ],
  ['patched', ['server_created_time', 'queue_time_start', 'queue_time_end', 'server_first_token_time'], []],
])('--timestamp-format %s emits that generation’s names', async (format, perChunk, final) => {
  const w = await startSimWorker(['--enable-metrics', '--timestamp-format', format, '--speed', '4'])
  try {
    const [first, last] = payloads(
      (await post(w.url, '/generate', gen({ sampling_params: { max_new_tokens: 2, ignore_eos: true } }))).text,
    )
    for (const key of perChunk) expect(first?.meta_info, key).toHaveProperty(key)
    for (const key of final) expect(last?.meta_info, key).toHaveProperty(key)
    expect(first?.meta_info).not.toHaveProperty('forward_entry_time')
  } finally {
    await w.stop()
  }
})

test('incremental streaming output sends deltas', async () => {
  const w = await startSimWorker(['--incremental-streaming-output', '--speed', '4'])
  try {
    const p = payloads((await post(w.url, '/generate', gen())).text)
    expect(p.map((c) => c.output_ids.length)).toEqual([1, 1, 1])
  } finally {
    await w.stop()
  }
})

test('past --max-queued-requests: 503 "The request queue is full."', async () => {
  const w = await startSimWorker(['--max-running-requests', '1', '--max-queued-requests', '1'])
  try {
    const long = { text: 'a b c', stream: false, sampling_params: { max_new_tokens: 150, ignore_eos: true } }
    const first = post(w.url, '/generate', long)
    await loadReaches(w.url, (running) => running === 1)
    const second = post(w.url, '/generate', long)
    await loadReaches(w.url, (running, waiting) => running === 1 && waiting === 1)
    expect(await post(w.url, '/generate', long)).toMatchObject({
      status: 503,
      text: '{"detail":"The request queue is full."}',
    })
    expect((await first).status).toBe(200)
    expect((await second).status).toBe(200)
  } finally {
    await w.stop()
  }
})

test('/health answers 503 while warming up (while /model_info already answers), then 200', async () => {
  const w = await startSimWorker(['--warmup-time', '1.5'], 'warming', { path: '/model_info' })
  try {
    expect((await request(`${w.url}/health`)).statusCode).toBe(503)
    // read until it answers 200, not after a fixed 1.8 s that a worker short of CPU can outlast
    await vi.waitUntil(async () => (await request(`${w.url}/health`)).statusCode === 200, {
      timeout: 15_000,
      interval: 100,
    })
    expect((await request(`${w.url}/health`)).statusCode).toBe(200)
    expect(w.logTail().some((l) => l.includes('The server is fired up and ready to roll!'))).toBe(true)
  } finally {
    await w.stop()
  }
})

test('bad flags fail with the flag, what was expected and what was given', async () => {
  await expect(startSimWorker(['--max-running-requests', 'lots'])).rejects.toThrow(
    '`--max-running-requests`: expected a positive integer, got "lots" (string)',
  )
  await expect(startSimWorker(['--no-such-flag'])).rejects.toThrow("Unknown option '--no-such-flag'")
})
