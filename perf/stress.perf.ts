import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'

// Stress: everything at once; how many succeed and the highest throughput the worker reaches.
test('stress: 1000 requests at once all succeed, and the maximum throughput is reported', async ({
  topology,
  benchRequests,
}) => {
  const run = await benchRequests(topology('node'), {
    name: 'rate=inf',
    rate: Number.POSITIVE_INFINITY,
    requests: 1000,
    seed: 9,
    dataset: { kind: 'random', inputLen: 64, outputLen: 16 },
  })
  console.log(
    `max throughput: ${run.summary.request_throughput.toFixed(1)} req/s, ${run.summary.output_token_throughput?.toFixed(0) ?? 'not reported'} output tok/s; peak concurrency ${run.summary.concurrency.max}`,
  )
  expect(run.records).toHaveLength(1000)
  expect(run).toMeetSlo(
    { success_rate: { min: 0.99 }, request_throughput: { min: 20 } },
    { maxEventLoopDelayMs: 250, maxDispatchLagMs: 250 },
  )
  // a burst leaves requests queued in the server: the queue, not the router, is where they wait
  expect(run.summary.metrics.pure_queue_time?.p99).toBeGreaterThan(run.summary.metrics.queue_time_in_router?.p99 ?? 0)
})
