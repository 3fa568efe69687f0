import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'

// The seed framework's own node test, through the router: 100 requests at 50 req/s arrive within about 2 s,
// queue in the workers (not the router), and meet p99 TTFT, p99 pure queue time and success rate.
test('router node test: 100 requests at 50 req/s through the router meet the SLOs', async ({
  topology,
  benchRequests,
}) => {
  const cluster = topology('cluster')
  const run = await benchRequests(cluster, {
    rate: 50,
    requests: 100,
    seed: 11,
    dataset: { kind: 'random', inputLen: 200, outputLen: 64, rangeRatio: 0.5 },
  })
  const lastArrival = Math.max(...run.records.map((r) => r.arrival_time))
  expect(lastArrival).toBeGreaterThan(1.4)
  expect(lastArrival).toBeLessThan(2.6)
  expect(run).toMeetSlo({ ttft: { p99: 500 }, pure_queue_time: { p99: 100 }, success_rate: { min: 0.99 } })
  // the workers' own counters account for every request: the router spread them, none was lost in it
  const perWorker = run.summary.server_metrics?.requests_per_worker
  expect(perWorker, "needs the workers' /metrics (--enable-metrics)").not.toBeNull()
  expect(Object.values(perWorker ?? {}).reduce((a, b) => a + b, 0)).toBe(100)
  expect(Object.keys(perWorker ?? {})).toHaveLength(cluster.workers.length)
})
