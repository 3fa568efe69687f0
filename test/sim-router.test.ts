import { mkdtempSync } from 'node:fs'
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
