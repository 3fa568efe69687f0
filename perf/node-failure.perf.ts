import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'

// Node failure: two of four workers are killed at 30 % of the run and restored at 60 %.
test('node failure: the run completes, failed requests are accounted for, and success recovers', async ({ launchTopology, benchRequests }) => {
  await using cluster = await launchTopology('failover', {
    workers: 4,
    router: { policy: 'round_robin', args: ['--health-check-interval-secs', '1', '--health-failure-threshold', '1', '--cb-failure-threshold', '3', '--cb-timeout-duration-secs', '1'] },
  })
  const requests = 300
  const run = await benchRequests(cluster, { rate: 30, requests, seed: 6, dataset: { kind: 'random', inputLen: 64, outputLen: 24 }, failures: { '30%': ['worker-1', 'worker-2'], '60%': [] } })
  expect(run.records).toHaveLength(requests)
  const end = Math.max(...run.records.map((r) => r.arrival_time))
  const [failAt, restoreAt] = [0.3 * end, 0.6 * end]
  const failed = run.records.filter((r) => !r.success)
  const down = new Set([cluster.workers[0]!.url, cluster.workers[1]!.url])
  console.log(`${failed.length} of ${requests} failed: ${JSON.stringify(run.summary.errors_by_type)}; per worker ${JSON.stringify(run.summary.requests_per_host)}`)
  // every failure is a request that was on a killed worker when it died
  for (const r of failed) {
    expect(down.has(r.host), `${r.req_id} failed on ${r.host}: ${r.error}`).toBe(true)
    expect(r.finish_time).toBeGreaterThanOrEqual(failAt - 0.05)
    expect(r.arrival_time).toBeLessThan(restoreAt)
  }
  // while they are down, new requests go to the survivors
  const during = run.records.filter((r) => r.router_send_time !== undefined && r.router_send_time > failAt + 1 && r.router_send_time < restoreAt - 0.5)
  expect(during.length).toBeGreaterThan(20)
  expect(during.every((r) => r.success && !down.has(r.host))).toBe(true)
  // after the restore, success recovers and the restored workers serve again
  const after = run.records.filter((r) => r.arrival_time > restoreAt + 2)
  expect(after.every((r) => r.success)).toBe(true)
  expect(after.some((r) => down.has(r.host))).toBe(true)
})
