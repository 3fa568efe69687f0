import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { request } from 'undici'
import { expect, test } from 'vitest'
import { benchRequests } from '../src/index.ts'
import { launchTopology } from '../src/plugin/launch-topology.ts'
import { withServer } from './helpers/fixture-server.ts'

// The reliability and security audit (issue 11): each finding as a user would meet it, with real processes and sockets.
const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-i11-'))
const one = {
  requests: 1,
  tokenizer: 'words',
  dataset: { kind: 'custom' as const, items: [{ prompt: 'hello there', output_len: 2 }] },
}

const files = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())

test('four perf tests named a/b, a?b, a b and one against a key-echoing server: four CSVs, the key in no written file', async () => {
  const artifacts = outDir()
  const key = 'sk-echo-me-0123456789'
  const project = fileURLToPath(new URL('./fixtures/artifact-project', import.meta.url))
  const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url))
  const result = await execa(process.execPath, [vitest, 'run', '--root', project, '--project', 'perf'], {
    env: { ARTIFACTS: artifacts, ECHO_KEY: key, CI: 'true' },
    reject: false,
    all: true,
  })
  expect(result.exitCode, result.all).toBe(0)
  // the console (progress, the end-of-run table) and the table's runs.json are written bytes too
  expect(result.all).not.toContain(key)
  expect(readFileSync(join(project, '.vitest', 'llm-perf', 'runs.json'), 'utf8')).not.toContain(key)
  const written = files(artifacts)
  expect(written.filter((f) => f.endsWith('requests.csv'))).toHaveLength(4)
  for (const f of written) expect(readFileSync(f, 'utf8'), f).not.toContain(key)
  const echoed = written.find(
    (f) => f.endsWith('requests.csv') && readFileSync(f, 'utf8').includes('Invalid credentials'),
  )
  expect(readFileSync(echoed as string, 'utf8')).toContain('Invalid credentials: Bearer ***')
}, 120_000)

test('[DONE] ends the request although the server keeps the body open', async () => {
  await withServer('done-then-open', async (url) => {
    const [r] = (await benchRequests({ url }, { ...one, outDir: outDir(), stallTimeoutMs: 2000 })).records
    expect(r).toMatchObject({ success: true, actual_output_tokens: 2 })
    expect(r?.total_latency).toBeLessThan(1)
  })
})

test('an SSE line longer than maxLineBytes fails its request as malformed, naming the cap', async () => {
  await withServer('huge-line', async (url) => {
    const [r] = (await benchRequests({ url }, { ...one, outDir: outDir(), maxLineBytes: 1024 * 1024 })).records
    expect(r).toMatchObject({
      success: false,
      error_type: 'malformed',
      error: 'an SSE line longer than 1048576 characters (maxLineBytes)',
    })
  })
})

test('a gzipped SSE body, though no Accept-Encoding was sent, is decoded', async () => {
  await withServer('gzip-sse', async (url) => {
    const [r] = (await benchRequests({ url }, { ...one, outDir: outDir() })).records
    expect(r).toMatchObject({ success: true, actual_output_tokens: 2, has_generated_text: true })
  })
})

test('an abort at 0.3 s: in-flight rows are aborted, never-sent rows have no finish time, and the run lasts until the abort', async () => {
  await withServer('never-responds', async (url) => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('stop now')), 300)
    const run = await benchRequests(
      { url },
      {
        requests: 20,
        rate: 10,
        tokenizer: 'words',
        signal: controller.signal,
        outDir: outDir(),
        dataset: { kind: 'random', inputLen: 4, outputLen: 2 },
      },
    )
    expect(run.records).toHaveLength(20)
    expect(new Set(run.records.map((r) => r.error_type))).toEqual(new Set(['aborted']))
    const unsent = run.records.filter((r) => r.router_send_time === undefined)
    expect(unsent.length).toBeGreaterThan(10)
    expect(unsent.every((r) => r.finish_time === undefined && r.total_latency === undefined)).toBe(true)
    expect(run.summary.duration_s).toBeLessThan(1)
  })
})

test('every problem with the options, the SLO spec, the failure schedule and the target in one error', async () => {
  const attempt = benchRequests(
    { url: 'not a url' },
    {
      rate: -1,
      requests: 5,
      slo: { ttft: { p42: 5 } as never },
      failures: { soon: ['worker-1'] },
      dataset: { kind: 'nope' } as never,
    },
  )
  await expect(attempt).rejects.toThrow(
    [
      'Invalid benchRequests options:',
      '  - `rate`: expected a positive number of requests per second, or Infinity, got -1 (number)',
      "  - `dataset.kind`: expected `kind` to be one of 'random', 'sharegpt', 'custom', 'shared-prefix', 'trace', 'conversations', got \"nope\" (string)",
      "  - `slo`: Unsupported objective 'p42' for ttft (a duration): supported: p50, p90, p95, p99, p999, mean, max, minSamples",
      '  - `failures`: needs a topology started by vitest-llm-perf as the target (it can fail its workers), got a plain URL',
      "  - `failures`: expected keys like '30s', '500ms', '2m', '30%' or a number of seconds, got \"soon\"",
      '  - `failures.soon`: unknown worker "worker-1"; the topology has no named workers',
      '  - `target.url`: expected an http(s) URL such as \'http://127.0.0.1:30000\', got "not a url" (string)',
    ].join('\n'),
  )
})

test.skipIf(process.platform !== 'linux')(
  'a launched simulator and its router get the API key through their environment, not their command lines',
  async () => {
    const key = 'sk-not-in-ps-42'
    await using cluster = await launchTopology(
      'keyed',
      { workers: 1, router: { policy: 'round_robin' }, apiKey: key },
      { logDir: outDir() },
    )
    const pids = cluster.workers.map((w) => w.pid as number)
    for (const pid of pids) expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain(key)
    const body = JSON.stringify({ text: 'hello', sampling_params: { max_new_tokens: 1 } })
    expect((await request(`${cluster.url}/generate`, { method: 'POST', body })).statusCode).toBe(401)
    expect(
      (await request(`${cluster.url}/generate`, { method: 'POST', body, headers: { authorization: `Bearer ${key}` } }))
        .statusCode,
    ).toBe(200)
  },
)
