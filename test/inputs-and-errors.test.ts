import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { StartedServer } from '../src/launch/started-server.ts'
import { benchRequests } from '../src/run/bench-requests.ts'
import { dispatchAtTargets } from '../src/schedule/dispatcher.ts'
import { cli } from './helpers/cli.ts'
import { startSimRouter, startSimWorker } from './helpers/sim.ts'

// Issue 31, reliability round 4: each test fails on the defect the audit reproduced, as a user would meet it.
const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-31-'))
const read = (dir: string, name: string): string => readFileSync(join(dir, name), 'utf8')
let worker: StartedServer
beforeAll(async () => {
  worker = await startSimWorker(['--speed', '4'], 'issue-31')
})
afterAll(() => worker.stop())

test('1. a short or numeric API key is never masked into the data: every cell and summary.json stay as written', async () => {
  for (const key of ['true', '0.00', '1234']) {
    const dir = outDir()
    const r = await cli([
      'run',
      worker.url,
      '--rate',
      '50',
      '--requests',
      '20',
      '--api-key',
      key,
      '--quiet',
      '--out-dir',
      dir,
    ])
    expect(r.exitCode, r.all).toBe(0)
    const summary = JSON.parse(read(dir, 'summary.json'))
    expect(summary.warnings.join(' ')).toMatch(/the API key is not masked in these files/u)
    const csv = read(dir, 'requests.csv')
    expect(csv).not.toContain('***')
    expect(csv.split('\n')[1]?.split(',')[1]).toBe('true')
    expect(summary.metrics.ttft.p50).toBeGreaterThan(0)
  }
  // the key from the environment (kept out of `ps`): a long one is masked wherever the server echoes it
  const dir = outDir()
  const r = await cli(['run', worker.url, '--rate', '50', '--requests', '5', '--quiet', '--out-dir', dir], {
    LLM_PERF_API_KEY: 'sk-from-the-environment',
  })
  expect(r.exitCode, r.all).toBe(0)
  expect(JSON.parse(read(dir, 'summary.json')).options.apiKey).toBe('(set, not recorded)')
}, 60_000)

test('2. a run that fails before sending anything keeps the previous run in its folder', async () => {
  const dir = outDir()
  expect(
    (await cli(['run', worker.url, '--rate', '50', '--requests', '5', '--quiet', '--out-dir', dir])).exitCode,
  ).toBe(0)
  const before = read(dir, 'summary.json')
  const failed = await cli([
    'run',
    worker.url,
    '--dataset',
    'sharegpt',
    '--dataset-path',
    join(dir, 'missing.json'),
    '--out-dir',
    dir,
  ])
  expect(failed.exitCode).toBe(1)
  for (const f of ['requests.csv', 'summary.json', 'report.html']) expect(existsSync(join(dir, f)), f).toBe(true)
  expect(read(dir, 'summary.json')).toBe(before)
}, 60_000)

test('5–7. runaway inputs are refused before anything starts: threads, warm-up, sampling interval', async () => {
  const threads = await cli(['run', worker.url, '--processes', '1000', '--requests', '5'])
  expect(threads.exitCode).toBe(1)
  expect(threads.stderr).toMatch(/`processes`: expected at most \d+ \(4 per core/u)
  const r = await cli(['run', worker.url, '--requests', '5', '--warmup', '100000000', '--metrics-interval-ms', '0.001'])
  expect(r.exitCode).toBe(1)
  expect(r.stderr).toContain('`warmup`: expected an integer from 0 to 1000')
  expect(r.stderr).toContain('`metricsIntervalMs`: expected 0 (off) or at least 10 ms')
  // more threads than requests: each request is one thread's at most
  const run = await benchRequests(worker, { rate: 100, requests: 3, processes: 8, quiet: true, metricsIntervalMs: 0 })
  expect(run.summary.load.processes).toBe(3)
}, 60_000)

test('6. an arrival past setTimeout’s 24.8-day limit is waited for in bounded naps, not spun on', async () => {
  const warnings: string[] = []
  const onWarning = (w: Error): void => {
    warnings.push(w.name)
  }
  process.on('warning', onWarning)
  const abort = new AbortController()
  const waiting = { waitMs: 0 }
  const t0 = performance.now()
  const done = dispatchAtTargets({
    targetsMs: Float64Array.of(30 * 24 * 3600 * 1000),
    nowMs: () => performance.now() - t0,
    fire: () => {},
    signal: abort.signal,
    waiting,
  })
  await new Promise((resolve) => setTimeout(resolve, 300))
  abort.abort()
  expect(await done).toBe(0)
  process.off('warning', onWarning)
  expect(warnings).not.toContain('TimeoutOverflowWarning')
  expect(waiting.waitMs).toBeLessThan(50)
})

test('11. the simulated router does not count a client that left as a worker failure', async () => {
  const slow = await startSimWorker(['--speed', '0.5'], 'slow-a')
  const router = await startSimRouter([slow.url], ['--cb-failure-threshold', '2', '--health-check-interval-secs', '60'])
  try {
    // every client gives up long before its 256 tokens: six disconnects, which opened the breaker before
    const gone = await benchRequests(router, {
      rate: 50,
      requests: 6,
      requestTimeoutMs: 200,
      dataset: { kind: 'random', inputLen: 16, outputLen: 256 },
      quiet: true,
      metricsIntervalMs: 0,
    })
    expect(gone.summary.errors_by_type.deadline).toBe(6)
    const listed = (await (await fetch(`${router.url}/workers`)).json()) as {
      workers: Array<{ circuit_breaker: string }>
    }
    expect(listed.workers.map((w) => w.circuit_breaker)).toEqual(['closed'])
    const light = await benchRequests(router, {
      rate: 20,
      requests: 3,
      dataset: { kind: 'random', inputLen: 16, outputLen: 2 },
      quiet: true,
      metricsIntervalMs: 0,
    })
    expect(light.summary.success_rate).toBe(1)
  } finally {
    await router.stop()
    await slow.stop()
  }
}, 60_000)

test('12. a trace is timed from its earliest line; a line out of time order is refused, naming it', async () => {
  const dir = outDir()
  const line = (t: number) => JSON.stringify({ timestamp: t, input_length: 32, output_length: 2, hash_ids: [] })
  writeFileSync(join(dir, 'late.jsonl'), `${[100000, 100010, 100020].map(line).join('\n')}\n`)
  const ok = await benchRequests(worker, {
    arrival: 'trace',
    dataset: { kind: 'trace', path: join(dir, 'late.jsonl') },
    quiet: true,
    metricsIntervalMs: 0,
  })
  expect(ok.records.map((r) => r.arrival_time).sort()).toEqual([0, 0.01, 0.02])
  writeFileSync(join(dir, 'unsorted.jsonl'), `${[100000, 0, 100010].map(line).join('\n')}\n`)
  await expect(
    benchRequests(worker, {
      arrival: 'trace',
      dataset: { kind: 'trace', path: join(dir, 'unsorted.jsonl') },
      quiet: true,
    }),
  ).rejects.toThrow(/request 2 arrives at 0 ms, before request 1's 100000 ms: sort the trace by timestamp/u)
}, 60_000)

test('13. compare --fail-on judges a rise from a 0 ms base on its own size', async () => {
  const base = outDir()
  expect(
    (await cli(['run', worker.url, '--rate', '50', '--requests', '30', '--quiet', '--out-dir', base])).exitCode,
  ).toBe(0)
  const worse = join(outDir(), 'worse')
  mkdirSync(worse)
  cpSync(base, worse, { recursive: true })
  // the same rows, but with a pure queue time of 0 in A and of 250 ms in B
  const setQueue = (dir: string, seconds: string): void => {
    const [head, ...rows] = read(dir, 'requests.csv').trimEnd().split('\n')
    const at = (head as string).split(',').indexOf('pure_queue_time')
    const edited = rows.map((r) =>
      r
        .split(',')
        .map((c, i) => (i === at ? seconds : c))
        .join(','),
    )
    writeFileSync(join(dir, 'requests.csv'), `${[head, ...edited].join('\n')}\n`)
  }
  setQueue(base, '0')
  setQueue(worse, '0.25')
  const r = await cli(['compare', base, worse, '--fail-on', 'pure_queue_time.p99>+10%'])
  expect(r.exitCode, r.all).toBe(1)
  expect(r.stdout).toContain('✗ pure_queue_time p99 rose from 0 to 250 ms')
}, 60_000)

test('14. a URL with a path prefix, a query and credentials: every request goes under it, no file holds them', async () => {
  // a reverse proxy serving the worker at /sglang/, wanting ?key=… and Basic credentials
  const seen: string[] = []
  const proxy = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    const auth = Buffer.from(`user:${'pw-9f8e7d6c'}`).toString('base64')
    if (
      !url.pathname.startsWith('/sglang/') ||
      url.searchParams.get('key') !== 'query-secret-42' ||
      req.headers.authorization !== `Basic ${auth}`
    ) {
      res.writeHead(403).end('forbidden')
      return
    }
    seen.push(url.pathname)
    const upstream = httpRequest(
      `${worker.url}${url.pathname.slice('/sglang'.length)}`,
      { method: req.method, headers: { ...req.headers, host: new URL(worker.url).host } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      },
    )
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  try {
    const port = (proxy.address() as AddressInfo).port
    const dir = outDir()
    const r = await cli([
      'run',
      `http://user:pw-9f8e7d6c@127.0.0.1:${port}/sglang/?key=query-secret-42`,
      '--rate',
      '50',
      '--requests',
      '10',
      '--metrics-interval-ms',
      '50',
      '--out-dir',
      dir,
    ])
    expect(r.exitCode, r.all).toBe(0)
    expect(seen).toContain('/sglang/generate')
    expect(seen).toContain('/sglang/metrics')
    for (const f of ['summary.json', 'report.html', 'requests.csv'])
      for (const secret of ['pw-9f8e7d6c', 'query-secret-42'])
        expect(read(dir, f), `${f}: ${secret}`).not.toContain(secret)
    expect(JSON.parse(read(dir, 'summary.json')).target).toBe(`http://***@127.0.0.1:${port}/sglang?key=***`)
    expect(r.all).not.toContain('pw-9f8e7d6c')
    // a credential in extraBody is recorded as set, not as its value
    const run = await benchRequests(worker, {
      rate: 50,
      requests: 2,
      extraBody: { api_key: 'body-secret-value' },
      quiet: true,
      metricsIntervalMs: 0,
    })
    expect(readFileSync(run.files.json, 'utf8')).not.toContain('body-secret-value')
  } finally {
    proxy.close()
  }
}, 60_000)

test('15. a --config that cannot be used is one clear error naming the file', async () => {
  const dir = outDir()
  const cases: Array<[string, string, RegExp]> = [
    ['bad.json', '{ "rate": 8,', /bad\.json: is not JSON/u],
    ['null.json', 'null', /null\.json: expected an object of benchRequests options .* got null/u],
    ['list.json', '[1,2]', /list\.json: expected an object .* got an array/u],
    ['bom.json', '\uFEFF{ "rate": 5, "requests": 2 }', /^$/u],
    [
      'broken.ts',
      'export default { apiKey: "sk-in-source-1234", rate: ',
      /broken\.ts: could not be loaded \(SyntaxError/u,
    ],
  ]
  for (const [name, text, expected] of cases) {
    writeFileSync(join(dir, name), text)
    const r = await cli(['run', worker.url, '--config', join(dir, name), '--quiet', '--out-dir', outDir()])
    if (name === 'bom.json') expect(r.exitCode, r.all).toBe(0)
    else {
      expect(r.exitCode).toBe(1)
      expect(r.stderr).toMatch(expected)
      expect(r.stderr).not.toContain('sk-in-source-1234')
    }
  }
  const folder = await cli(['run', worker.url, '--config', dir])
  expect(folder.stderr).toMatch(/is a folder; expected a \.json, \.ts, \.mts or \.mjs file/u)
}, 60_000)

// 8. (streaming requests.csv) is test/csv-streaming.test.ts: it is bound by the CPU, not judged by latency

test('15. traces, summaries and package.json that cannot be used are one clear error, not a TypeError', async () => {
  const dir = outDir()
  const trace = async (lines: string[]) => {
    writeFileSync(join(dir, 't.jsonl'), `${lines.join('\n')}\n`)
    return benchRequests(worker, {
      arrival: 'trace',
      dataset: { kind: 'trace', path: join(dir, 't.jsonl') },
      quiet: true,
    }).catch((e: Error) => e)
  }
  const ok = JSON.stringify({ timestamp: 0, input_length: 8, output_length: 2 })
  expect(String(await trace([ok, 'null']))).toMatch(/t\.jsonl:2: expected an object such as/u)
  expect(String(await trace([JSON.stringify({ timestamp: 0, input_length: 200000000, output_length: 2 })]))).toMatch(
    /t\.jsonl:1: input_length must be an integer from 1 to 10,000,000, got 200000000/u,
  )
  expect(
    String(await trace([JSON.stringify({ timestamp: 0, input_length: 8, output_length: 2, session_id: { a: 1 } })])),
  ).toMatch(/session_id must be a string or a number, got \{"a":1\}/u)
  // a summary.json from another version or edited by hand: compare, report and merge name the field
  const run = outDir()
  expect(
    (await cli(['run', worker.url, '--rate', '50', '--requests', '5', '--quiet', '--out-dir', run])).exitCode,
  ).toBe(0)
  const summary = JSON.parse(read(run, 'summary.json'))
  const { options: _o, ...noOptions } = summary
  void _o
  for (const [edit, expected] of [
    [noOptions, /`options`: expected an object/u],
    [{ ...summary, success_rate: '1.0' }, /`success_rate`: expected a number/u],
    [{ ...summary, request_throughput: null }, /`request_throughput`: expected a number/u],
  ] as const) {
    writeFileSync(join(run, 'summary.json'), JSON.stringify(edit))
    for (const command of [
      ['report', run],
      ['compare', run, run],
    ]) {
      const r = await cli(command)
      expect(r.exitCode).toBe(1)
      expect(r.stderr).toMatch(/summary\.json is not a run's summary this version reads/u)
      expect(r.stderr).toMatch(expected)
      expect(r.stderr).not.toContain('TypeError')
    }
  }
  // init in a project whose package.json does not parse
  const project = outDir()
  writeFileSync(join(project, 'package.json'), '{ "name": "x", ')
  const init = await cli(['init', project])
  expect(init.exitCode).toBe(1)
  expect(init.stderr).toMatch(/package\.json: is not JSON/u)
}, 60_000)
