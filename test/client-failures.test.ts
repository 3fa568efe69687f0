import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { benchRequests } from '../src/index.ts'
import { noSuccess } from '../src/slo/evaluate-slo.ts'
import { type FixtureServer, startFixtureServer, withServer } from './helpers/fixture-server.ts'

const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-client-'))

const one = {
  requests: 1,
  tokenizer: 'words',
  dataset: { kind: 'custom' as const, items: [{ prompt: 'hello there' }] },
}

// Each behaviour is its own server process; each must end as exactly one failed (or passed) row with a clear error.
describe.each([
  ['slow-first-token', { success: true, error_type: undefined, actual_output_tokens: 3 }, undefined],
  ['error-chunk', { success: false, error_type: 'payload' }, 'server error in response: Duplicate request ID detected'],
  ['truncated-stream', { success: false, error_type: 'incomplete' }, 'stream ended without [DONE] after 2 chunks'],
  ['reset-mid-stream', { success: false, error_type: 'reset' }, 'connection closed mid-stream after 1 chunks'],
  ['malformed-json', { success: false, error_type: 'malformed' }, 'malformed JSON in response'],
  ['split-frames', { success: true, actual_output_tokens: 2, has_generated_text: true }, undefined],
  [
    'error-field',
    { success: false, error_type: 'payload' },
    'server error in SSE field "error": Input prompt is too big compared to KV size. Please try increasing KV size.',
  ],
  [
    'error-event',
    { success: false, error_type: 'payload' },
    'server error event: The server had an error while processing your request.',
  ],
  [
    'empty-stream',
    { success: false, error_type: 'empty' },
    'the response carried no generated token and no finish reason (1 chunks, then [DONE])',
  ],
  [
    'short-output',
    {
      success: true,
      actual_output_tokens: 2,
      warning: 'returned 2 of 128 requested output tokens (finish_reason stop)',
    },
    undefined,
  ],
])('%s', (name, expected, message) => {
  let server: FixtureServer
  beforeAll(async () => {
    server = await startFixtureServer(name)
  })
  afterAll(() => server.stop())

  test('becomes one row with the expected outcome', async () => {
    const run = await benchRequests({ url: server.url }, { ...one, outDir: outDir(), stallTimeoutMs: 2000 })
    expect(run.records).toHaveLength(1)
    expect(run.records[0]).toMatchObject(expected)
    if (message !== undefined) expect(run.records[0]?.error).toContain(message)
    expect(readFileSync(run.files.csv, 'utf8').trim().split('\n')).toHaveLength(2)
  })
})

test('slow first token: client_ttft sees the 300 ms wait, ITL the 20 ms gaps', async () => {
  await withServer('slow-first-token', async (url) => {
    const [r] = (await benchRequests({ url }, { ...one, outDir: outDir() })).records
    expect(r?.client_ttft).toBeGreaterThan(0.29)
    // the widest gap: a first chunk read late (a busy machine) shortens the mean's span (itl_mean 14.1 ms on CI), and
    // merging two reads widens the gap after them, never the widest below the server's 20 ms
    expect(r?.itl_max).toBeGreaterThan(0.015)
    expect(r?.server_e2e_latency).toBe(0.34)
  })
})

test('HTTP 503, 429 and 400 keep their status and the server’s words', async () => {
  await withServer('http-errors', async (url) => {
    const items = [{ prompt: 'want 503' }, { prompt: 'want 429' }, { prompt: 'want 400' }]
    const run = await benchRequests(
      { url },
      { requests: 3, rate: Number.POSITIVE_INFINITY, dataset: { kind: 'custom', items }, outDir: outDir() },
    )
    const byStatus = Object.fromEntries(run.records.map((r) => [r.http_status, r.error]))
    expect(byStatus).toEqual({
      503: 'HTTP 503: The request queue is full.',
      429: 'HTTP 429: Too many requests',
      400: 'HTTP 400: Either text, input_ids or input_embeds should be provided.',
    })
    expect(run.summary.errors_by_type).toEqual({ http: 3 })
  })
})

test('a stall between chunks fails after stallTimeoutMs', async () => {
  await withServer('stall-between-chunks', async (url) => {
    const [r] = (await benchRequests({ url }, { ...one, outDir: outDir(), stallTimeoutMs: 300 })).records
    expect(r).toMatchObject({
      success: false,
      error_type: 'stall',
      error: expect.stringMatching(/^stream stalled: no token for 300 ms \(stallTimeoutMs\) after 1 chunks/u),
    })
  })
})

test('no headers within headersTimeoutMs fails as a header timeout', async () => {
  await withServer('never-responds', async (url) => {
    const [r] = (await benchRequests({ url }, { ...one, outDir: outDir(), headersTimeoutMs: 300 })).records
    expect(r).toMatchObject({
      success: false,
      error_type: 'headers_timeout',
      error: 'no response headers within 300 ms (headersTimeoutMs)',
    })
  })
})

test('connection refused: every request is a failed row', async () => {
  const server = await startFixtureServer('never-responds')
  const url = server.url
  await server.stop()
  const run = await benchRequests(
    { url },
    { requests: 5, rate: 100, outDir: outDir(), dataset: { kind: 'random', inputLen: 4, outputLen: 2 } },
  )
  expect(run.records).toHaveLength(5)
  expect(run.records.every((r) => r.error === 'connection refused' && r.error_type === 'refused')).toBe(true)
  expect(run.summary.success_rate).toBe(0)
})

test('a server that refuses every connection from the start: five refusals, then the rest are not sent, each row saying why', async () => {
  const server = await startFixtureServer('never-responds')
  const url = server.url
  await server.stop()
  // at 1 req/s the 60 requests took a minute to say what the first refusal said
  const run = await benchRequests(
    { url },
    { requests: 60, rate: 1, outDir: outDir(), dataset: { kind: 'random', inputLen: 4, outputLen: 2 } },
  )
  expect(run.records).toHaveLength(60)
  // refused, all of them, the 55 unsent saying so: no row claims a connection it never tried
  expect(run.summary.errors_by_type).toEqual({ refused: 60 })
  const reason =
    'the server refused every connection from the start (5 requests): nothing listens there, so the other 55 were not sent'
  expect(run.records.filter((r) => r.error === 'connection refused')).toHaveLength(5)
  expect(run.records.filter((r) => r.error === `not sent: ${reason}`)).toHaveLength(55)
  expect(noSuccess(run)).toBe(
    `no request succeeded: 60 of 60 failed, all with "connection refused" (55 of them not sent, once the first 5 ` +
      `were refused) (connection refused by ${url}: is the server running?)`,
  )
  expect(run.summary.warnings).toContain(`stopped early: ${reason}`)
})

test('the abort signal ends the run: in-flight and unsent requests all get a row', async () => {
  await withServer('never-responds', async (url) => {
    const controller = new AbortController()
    let abortedAt = 0
    setTimeout(() => {
      abortedAt = performance.now()
      controller.abort(new Error('test timed out'))
    }, 300)
    const run = await benchRequests(
      { url },
      {
        requests: 20,
        rate: 20,
        signal: controller.signal,
        outDir: outDir(),
        dataset: { kind: 'random', inputLen: 4, outputLen: 2 },
        // the last /metrics sample after a run waits for this server up to a second: not what is tested here
        metricsIntervalMs: 0,
      },
    )
    // the abort also ends the probes this server never answers, rather than their 2 s limit
    expect(performance.now() - abortedAt).toBeLessThan(1500)
    expect(run.records).toHaveLength(20)
    expect(run.records.every((r) => r.error_type === 'aborted')).toBe(true)
    expect(
      run.records.filter((r) => r.error?.startsWith('aborted before it was sent: test timed out')).length,
    ).toBeGreaterThan(5)
    expect(readFileSync(run.files.csv, 'utf8').trim().split('\n')).toHaveLength(21)
  })
})
