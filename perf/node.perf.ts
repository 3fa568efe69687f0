import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'

// The classic node test: 100 requests at 50 req/s on one worker; arrivals spread over about 2 s.
test('node: 100 requests at 50 req/s meet p99 TTFT, p99 queue time and success rate', async ({
  topology,
  benchRequests,
}) => {
  const run = await benchRequests(topology('node'), {
    rate: 50,
    requests: 100,
    seed: 1,
    dataset: { kind: 'random', inputLen: 200, outputLen: 64, rangeRatio: 0.5 },
  })
  const lastArrival = Math.max(...run.records.map((r) => r.arrival_time))
  expect(lastArrival).toBeGreaterThan(1.4)
  expect(lastArrival).toBeLessThan(2.6)
  expect(run).toMeetSlo({ ttft: { p99: 500 }, pure_queue_time: { p99: 100 }, success_rate: { min: 0.99 } })
})
