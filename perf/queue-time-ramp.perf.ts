import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'

// Queue time under load: a rate ramp on one worker with a small batch limit; pure_queue_time rises past capacity.
const RATES = [5, 10, 20, 40, 80]

test('queue time under load: pure_queue_time rises as the rate passes capacity', async ({
  launchTopology,
  benchRequests,
}) => {
  await using worker = await launchTopology('ramp', { workers: 1, server: { maxRunningRequests: 8 } })
  const rows = []
  for (const rate of RATES) {
    const run = await benchRequests(worker, {
      name: `rate=${rate}`,
      rate,
      // 20 at the light rates (4 s at 5 req/s); a second of arrivals past capacity, whose queue then takes seconds
      // to drain
      requests: Math.max(20, rate),
      seed: rate,
      dataset: { kind: 'random', inputLen: 128, outputLen: 48 },
    })
    expect(run.summary.success_rate).toBe(1)
    const { pure_queue_time: queue, ttft } = run.summary.metrics
    // the server's queue timestamps: SGLang's /generate with --enable-metrics (never taken as 0 when missing)
    expect(queue, 'pure_queue_time reported').toBeDefined()
    rows.push({
      rate,
      'queue p50 ms': queue?.p50 as number,
      'queue p99 ms': queue?.p99 as number,
      'ttft p99 ms': ttft?.p99 as number,
      'req/s': run.summary.request_throughput,
    })
  }
  console.table(rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v.toFixed(1))]))))
  const q = rows.map((r) => r['queue p99 ms'])
  // below capacity (8 running × ~7 ms per step ≈ 23 req/s here) requests barely wait; above it they queue
  expect(q[0]).toBeLessThan(20)
  expect(q[4]).toBeGreaterThan(10 * Math.max(q[0] as number, 5))
  expect(q[4]).toBeGreaterThan(q[2] as number)
})
