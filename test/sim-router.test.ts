import { mkdtempSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { benchRequests } from '../src/index.ts'
import { freePort } from '../src/launch/free-port.ts'
import type { StartedServer } from '../src/launch/started-server.ts'
import { startSimRouter, startSimWorker } from './helpers/sim.ts'

const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-router-'))
const json = async (url: string, init?: Parameters<typeof request>[1]): Promise<{ status: number; body: any }> => {
  const res = await request(url, init)
  return { status: res.statusCode, body: JSON.parse(await res.body.text()) }
}

describe('two workers', () => {
  let workers: StartedServer[]
  beforeAll(async () => {
    workers = await Promise.all([
      startSimWorker(['--enable-metrics', '--speed', '4'], 'w1'),
      startSimWorker(['--enable-metrics', '--speed', '4'], 'w2'),
    ])
  })
  afterAll(() => Promise.all(workers.map((w) => w.stop())))

  test('round_robin spreads evenly, and the client reads the serving worker from the router’s header', async () => {
    const router = await startSimRouter(
      workers.map((w) => w.url),
      ['--policy', 'round_robin'],
    )
    try {
      expect(await json(`${router.url}/readiness`)).toEqual({
        status: 200,
        body: { status: 'ready', healthy_workers: 2, total_workers: 2 },
      })
      const run = await benchRequests(
        { url: router.url },
        { rate: 200, requests: 40, dataset: { kind: 'random', inputLen: 16, outputLen: 4 }, outDir: outDir() },
      )
      expect(run.summary.requests_per_host).toEqual({ [workers[0]!.url]: 20, [workers[1]!.url]: 20 })
      expect(run.records.every((r) => r.server_timestamps === 'current')).toBe(true)
    } finally {
      await router.stop()
    }
  })

  test('cache_aware keeps a shared prefix on one worker while load is balanced', async () => {
    const router = await startSimRouter(
      workers.map((w) => w.url),
      ['--policy', 'cache_aware'],
    )
    try {
      const dataset = {
        kind: 'shared-prefix',
        groups: 1,
        promptsPerGroup: 20,
        systemPromptLen: 300,
        questionLen: 8,
        outputLen: 2,
      } as const
      const run = await benchRequests({ url: router.url }, { rate: 50, arrival: 'constant', dataset, outDir: outDir() })
      expect(Object.values(run.summary.requests_per_host)).toEqual([20])
    } finally {
      await router.stop()
    }
  })

  test('cache_aware falls back to the least-loaded worker under imbalance', async () => {
    const router = await startSimRouter(
      workers.map((w) => w.url),
      ['--policy', 'cache_aware', '--balance-abs-threshold', '2', '--balance-rel-threshold', '1.5'],
    )
    try {
      const dataset = {
        kind: 'shared-prefix',
        groups: 1,
        promptsPerGroup: 30,
        systemPromptLen: 300,
        questionLen: 8,
        outputLen: 30,
      } as const
      const run = await benchRequests(
        { url: router.url },
        { rate: Number.POSITIVE_INFINITY, dataset, outDir: outDir() },
      )
      const counts = Object.values(run.summary.requests_per_host)
      expect(counts).toHaveLength(2)
      expect(Math.min(...counts)).toBeGreaterThan(5)
    } finally {
      await router.stop()
    }
  })

  test('/workers lists, adds and removes; /flush_cache fans out; smg_* metrics', async () => {
    const promPort = await freePort()
    const router = await startSimRouter([workers[0]!.url], ['--prometheus-port', String(promPort)])
    try {
      expect((await json(`${router.url}/workers`)).body.total).toBe(1)
      const added = await json(`${router.url}/workers`, {
        method: 'POST',
        body: JSON.stringify({ url: workers[1]!.url }),
      })
      expect(added).toMatchObject({ status: 202, body: { status: 'accepted', url: workers[1]!.url } })
      expect((await json(`${router.url}/workers`)).body.total).toBe(2)
      expect((await json(`${router.url}/workers/${added.body.worker_id}`, { method: 'DELETE' })).status).toBe(202)
      expect((await json(`${router.url}/workers`)).body.total).toBe(1)
      expect((await json(`${router.url}/flush_cache`, { method: 'POST' })).body.status).toBe('success')
      await request(`${router.url}/generate`, {
        method: 'POST',
        body: JSON.stringify({ text: 'hi', sampling_params: { max_new_tokens: 1 } }),
      }).then((r) => r.body.text())
      const metrics = await (await request(`http://127.0.0.1:${promPort}/metrics`)).body.text()
      for (const name of [
        'smg_http_requests_total',
        'smg_worker_selection_total',
        'smg_worker_health',
        'smg_worker_pool_size',
        'smg_worker_requests_active',
      ])
        expect(metrics, name).toContain(name)
    } finally {
      await router.stop()
    }
  })
})

test('/health is always 200; /readiness is 503 until a worker is healthy', async () => {
  const port = await freePort()
  // ready as soon as it listens: /health, not /readiness, which must stay 503 here
  const router = await startSimRouter([`http://127.0.0.1:${port}`], [], { path: '/health' })
  try {
    expect((await request(`${router.url}/health`)).statusCode).toBe(200)
    expect(await json(`${router.url}/readiness`)).toEqual({
      status: 503,
      body: { status: 'not ready', reason: 'insufficient healthy workers' },
    })
  } finally {
    await router.stop()
  }
})

test('a slow-reading client gets every byte its worker sent, while the router reads on for the others', async () => {
  // the router reads its link into memory it reuses: a chunk still queued for a slow client must not be overwritten
  const worker = await startSimWorker(['--speed', '16'], 'streams')
  const router = await startSimRouter([worker.url], ['--policy', 'round_robin'])
  try {
    const stream = (rid: string, slow: boolean): Promise<string[]> =>
      new Promise((resolve, reject) => {
        const body = JSON.stringify({
          rid,
          input_ids: [1, 2, 3, 4],
          sampling_params: { max_new_tokens: 1500, ignore_eos: true },
          stream: true,
        })
        const req = httpRequest(`${router.url}/generate`, { method: 'POST' }, (res) => {
          const parts: Buffer[] = []
          res.on('data', (b: Buffer) => parts.push(b))
          res.on('end', () => resolve(Buffer.concat(parts).toString('utf8').split('\n\n').filter(Boolean)))
          res.on('error', reject)
          if (slow) {
            // nothing read for a while: the kernel's buffers fill and the router queues what is left
            res.pause()
            setTimeout(() => res.resume(), 1500)
          }
        })
        req.on('error', reject)
        req.end(body)
      })
    const events = await Promise.all([stream('slow', true), ...[1, 2, 3].map((i) => stream(`fast-${i}`, false))])
    for (const [i, list] of events.entries()) {
      expect(list.at(-1), `stream ${i}`).toBe('data: [DONE]')
      const chunks = list.slice(0, -1).map((e) => JSON.parse(e.slice('data: '.length)))
      expect(chunks.length).toBe(1500)
      // each chunk repeats the whole output so far: any overwritten byte breaks the JSON or this
      for (const [k, c] of chunks.entries()) {
        expect(c.meta_info.completion_tokens).toBe(k + 1)
        expect(c.output_ids.length).toBe(k + 1)
        if (k > 0) expect(c.text.startsWith(chunks[k - 1].text)).toBe(true)
      }
    }
  } finally {
    await Promise.all([router.stop(), worker.stop()])
  }
})

test('a killed worker’s new requests are retried on another before their stream starts', async () => {
  const [a, b] = await Promise.all([
    startSimWorker(['--speed', '4'], 'alive'),
    startSimWorker(['--speed', '4'], 'doomed'),
  ])
  const router = await startSimRouter([a!.url, b!.url], ['--policy', 'round_robin'])
  try {
    await b!.kill()
    const run = await benchRequests(
      { url: router.url },
      { rate: 100, requests: 10, dataset: { kind: 'random', inputLen: 8, outputLen: 3 }, outDir: outDir() },
    )
    expect(run.summary.success_rate).toBe(1)
    expect(run.summary.requests_per_host).toEqual({ [a!.url]: 10 })
  } finally {
    await Promise.all([router.stop(), a!.stop()])
  }
})

test('--max-concurrent-requests: past the bucket a request waits in the queue, then gets 408; past the queue, 429 (smg’s bare statuses)', async () => {
  const worker = await startSimWorker(['--enable-metrics', '--speed', '1'], 'limited')
  // no refill: the bucket is exactly 4 requests at a time, and tokens come back only as responses end
  const router = await startSimRouter(
    [worker.url],
    [
      '--policy',
      'round_robin',
      '--max-concurrent-requests',
      '4',
      '--rate-limit-tokens-per-second',
      '0',
      '--queue-size',
      '2',
      '--queue-timeout-secs',
      '0.5',
    ],
  )
  try {
    const run = await benchRequests(
      { url: router.url },
      {
        rate: Infinity,
        requests: 10,
        maxInFlight: 10,
        quiet: true,
        // ~200 decode steps of ~6.5 ms: the first four hold their tokens past the queue's timeout
        dataset: { kind: 'random', inputLen: 16, outputLen: 200, rangeRatio: 1 },
        outDir: outDir(),
      },
    )
    const statuses = run.records.map((r) => (r.success ? 200 : r.http_status)).sort()
    expect(statuses).toEqual([200, 200, 200, 200, 408, 408, 429, 429, 429, 429])
    expect(run.records.filter((r) => !r.success).every((r) => r.error_type === 'http')).toBe(true)
    const metricsUrl = /Prometheus metrics on (\S+)/u.exec(router.logTail(50).join('\n'))?.[1] as string
    const metrics = await (await request(metricsUrl)).body.text()
    expect(metrics).toMatch(/smg_http_rate_limit_total\{result="rejected"\} 6/u)
  } finally {
    await router.stop()
    await worker.stop()
  }
})

describe('--forwarder-threads 3: connections spread over three threads, every decision made on one state', () => {
  let workers: StartedServer[]
  beforeAll(async () => {
    workers = await Promise.all([
      startSimWorker(['--enable-metrics', '--speed', '4'], 't1'),
      startSimWorker(['--enable-metrics', '--speed', '4'], 't2'),
    ])
  })
  afterAll(() => Promise.all(workers.map((w) => w.stop())))

  /** Sends `n` requests at once, each on its own connection (the kernel spreads connections, not requests). */
  const burst = async (url: string, n: number, body: (i: number) => object) =>
    Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const res = await request(`${url}/generate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', connection: 'close' },
          body: JSON.stringify(body(i)),
        })
        await res.body.text()
        return {
          status: res.statusCode,
          worker: String(res.headers['x-llm-perf-worker']),
          thread: String(res.headers['x-llm-perf-router-thread']),
        }
      }),
    )

  test('round_robin alternates exactly across the threads, and the metrics count every request once', async () => {
    const router = await startSimRouter(
      workers.map((w) => w.url),
      ['--policy', 'round_robin', '--forwarder-threads', '3'],
    )
    try {
      const out = await burst(router.url, 60, (i) => ({
        text: `question ${i}`,
        sampling_params: { max_new_tokens: 4 },
      }))
      expect(out.every((o) => o.status === 200)).toBe(true)
      // the main thread's decisions, whichever thread held the connection: 30 and 30
      const per = Map.groupBy(out, (o) => o.worker)
      expect([...per.values()].map((v) => v.length)).toEqual([30, 30])
      // connections landed on more than one of the forwarder threads 1, 2, 3 (the main thread, 0, only decides)
      const threads = new Set(out.map((o) => o.thread))
      expect(threads.size).toBeGreaterThan(1)
      expect([...threads].every((t) => ['1', '2', '3'].includes(t))).toBe(true)
      const metricsUrl = /Prometheus metrics on (\S+)/u.exec(router.logTail(50).join('\n'))?.[1] as string
      const metrics = await (await request(metricsUrl)).body.text()
      expect(metrics).toMatch(/smg_http_requests_total\{method="POST",path="\/generate"\} 60/u)
      expect(metrics).toMatch(/smg_http_responses_total\{status_code="200",error_code=""\} 60/u)
      // every pick given back: both workers at zero in flight
      expect(metrics.match(/smg_worker_requests_active\{worker="[^"]+"\} 0$/gmu)).toHaveLength(2)
      expect(metrics).toMatch(/llmperf_sim:fell_behind_seconds_total \d/u)
      // a route that is not the data plane is answered by the main thread, from any thread
      const listed = await json(`${router.url}/workers`)
      expect(listed.body.total).toBe(2)
    } finally {
      await router.stop()
    }
  })

  test('cache_aware keeps a shared prefix on one worker across threads', async () => {
    const router = await startSimRouter(
      workers.map((w) => w.url),
      ['--policy', 'cache_aware', '--forwarder-threads', '3'],
    )
    try {
      const prefix = 'You are a careful assistant who answers in one line. '.repeat(8)
      const first = await burst(router.url, 1, () => ({ text: `${prefix}q`, sampling_params: { max_new_tokens: 2 } }))
      const out = await burst(router.url, 24, (i) => ({
        text: `${prefix}question ${i}`,
        sampling_params: { max_new_tokens: 2 },
      }))
      expect(out.every((o) => o.status === 200)).toBe(true)
      expect(new Set(out.map((o) => o.worker))).toEqual(new Set([first[0]?.worker]))
      expect(new Set(out.map((o) => o.thread)).size).toBeGreaterThan(1)
    } finally {
      await router.stop()
    }
  })

  test('--max-concurrent-requests is one bucket and one queue for all the threads', async () => {
    // no refill: four requests at a time, whichever thread holds them; two wait and time out; four are refused
    const router = await startSimRouter(
      workers.map((w) => w.url),
      [
        '--forwarder-threads',
        '3',
        '--max-concurrent-requests',
        '4',
        '--rate-limit-tokens-per-second',
        '0',
        '--queue-size',
        '2',
        '--queue-timeout-secs',
        '0.5',
      ],
    )
    try {
      // 800 decode steps at --speed 4: the first four hold their tokens well past the queue's timeout
      const out = await burst(router.url, 10, (i) => ({
        text: `long ${i}`,
        sampling_params: { max_new_tokens: 800, ignore_eos: true },
      }))
      expect(out.map((o) => o.status).sort()).toEqual([200, 200, 200, 200, 408, 408, 429, 429, 429, 429])
    } finally {
      await router.stop()
    }
  })
})
