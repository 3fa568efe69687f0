import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'
import { server, workload } from './small-worker.ts'

// A concurrency sweep over the OpenAI chat API, on the capacity study's worker and workload (small-worker.ts). It
// judges ratios of one run to another, not a capacity found to 5 %: it runs beside the other studies, where the
// capacity study runs alone.

test('a concurrency sweep over the OpenAI chat API: ~4× the tokens at 4 in flight, at about the same speed per user', async ({
  launchTopology,
  sweep,
}) => {
  await using worker = await launchTopology('sweep-chat', { workers: 1, server, sim: { speed: 4 } })
  const result = await sweep(
    worker,
    { concurrencies: [1, 4] },
    {
      ...workload,
      api: 'chat',
      requests: 24,
      slo: { client_ttft: { p90: 1000 } },
    },
  )
  const [one, four] = result.points
  console.table(
    result.points.map((p) => ({
      concurrency: p.offered,
      'req/s': p.requestThroughput,
      'tok/s': p.outputTokenThroughput,
      'tok/s per user': p.outputTokensPerUser,
      'ttft p50 (ms)': p.ttft.p50,
    })),
  )
  expect(one?.ttftSource).toBe('client_ttft')
  // decode is memory-bound: a step carrying four sequences takes barely longer than one carrying one (the profile's
  // 0.03 ms a sequence on 6.4 ms), so four in flight serve ~4× the tokens at about the same speed per user
  expect(four?.outputTokenThroughput).toBeGreaterThan(2.5 * (one?.outputTokenThroughput as number))
  expect(four?.outputTokensPerUser).toBeGreaterThan(0.8 * (one?.outputTokensPerUser as number))
  expect(four?.outputTokensPerUser).toBeLessThan(1.1 * (one?.outputTokensPerUser as number))
  expect(four?.goodput?.fraction).toBe(1)
})
