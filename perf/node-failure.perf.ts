import { readFileSync } from 'node:fs'
import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'

// Node failure: two of four workers are killed at 30 % of the run and restored at 60 %, in the seed
// framework's own schedule format (workers by number). Nothing here reads which worker served a row: a real
// sglang_router does not say. What the workers did comes from their own /metrics.
test('node failure: the run completes, failures fall in the outage, success recovers, and the restored workers serve again', async ({
  launchTopology,
  benchRequests,
}) => {
  await using cluster = await launchTopology('failover', {
    workers: 4,
    router: {
      policy: 'round_robin',
      args: [
        '--health-check-interval-secs',
        '1',
        '--health-failure-threshold',
        '1',
        '--cb-failure-threshold',
        '3',
        '--cb-timeout-duration-secs',
        '1',
      ],
    },
  })
  const requests = 300
  const run = await benchRequests(cluster, {
    rate: 30,
    requests,
    seed: 6,
    dataset: { kind: 'random', inputLen: 64, outputLen: 24 },
    failures: { '30%': [1, 2], '60%': [] },
  })
  expect(run.records).toHaveLength(requests)
  const end = Math.max(...run.records.map((r) => r.arrival_time))
  const [failAt, restoreAt] = [0.3 * end, 0.6 * end]
  const failed = run.records.filter((r) => !r.success)
  console.log(
    `${failed.length} of ${requests} failed: ${JSON.stringify(run.summary.errors_by_type)}; counted by each worker ${JSON.stringify(run.summary.server_metrics?.requests_per_worker)}`,
  )
  // every failure is a request in flight when the workers died, or sent before the router noticed
  for (const r of failed) {
    expect(r.finish_time, `${r.req_id}: ${r.error}`).toBeGreaterThanOrEqual(failAt - 0.05)
    expect(r.arrival_time, `${r.req_id}: ${r.error}`).toBeLessThan(restoreAt)
  }
  // once the router has noticed, requests go to the survivors and succeed
  const during = run.records.filter(
    (r) => r.router_send_time !== undefined && r.router_send_time > failAt + 1 && r.router_send_time < restoreAt - 0.5,
  )
  expect(during.length).toBeGreaterThan(20)
  expect(during.every((r) => r.success)).toBe(true)
  // after the restore, success recovers
  expect(run.records.filter((r) => r.arrival_time > restoreAt + 2).every((r) => r.success)).toBe(true)
  // the killed workers' /metrics went silent during the outage, and their restarted processes counted requests afterwards
  const rows = readFileSync(run.files.serverMetrics as string, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(','))
  for (const worker of ['worker-1', 'worker-2']) {
    const counted = rows
      .filter(([, source, metric]) => source === worker && metric === 'num_requests_total')
      .map(([t, , , v]) => [Number(t), Number(v)] as const)
    expect(
      counted.filter(([t]) => t > failAt + 0.5 && t < restoreAt - 0.5),
      `${worker} sampled while down`,
    ).toEqual([])
    // a restarted SGLang worker loads its model for minutes, longer than this run lasts: judged only once it
    // answered again during the run (the simulator restarts in well under a second, so there it must have)
    const back = counted.filter(([t]) => t > restoreAt)
    if (cluster.engine === 'sim')
      expect(back.length, `${worker} answered /metrics after its restart`).toBeGreaterThan(0)
    if (back.length === 0) console.log(`${worker} was not back before the run ended: its serving again is not judged`)
    else expect(back.filter(([, v]) => v > 0).length, `${worker} served after its restart`).toBeGreaterThan(0)
  }
})
