import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'
import { validateCapacityOptions } from '../src/capacity/capacity-options.ts'
import { judgeStep, overall } from '../src/capacity/step-verdict.ts'
import { server, workload } from './small-worker.ts'

// Capacity checked against physics, not just found. The simulator is time-scale invariant: at --speed 8 the same
// seeded workload at twice the rate of --speed 4, judged by half the latency limit over half the step length, is the same
// system in half the time, so the search must find exactly twice the capacity. Two workers behind round_robin
// each see half the arrivals, and more regular ones (Erlang-2 gaps), so they sustain a little over twice one
// worker. And a found capacity C must hold when run again at C, and break at 1.25 C — judged as the search judges a
// step: C is the highest rate whose steps' intervals did not lie wholly past the limit, so run again it may read a
// p90 a hair over it (a clean-clone CI: the search's own two runs at 37 req/s read 254.5 and 237.0 ms against 250, the
// run again 252.8) but not confidently over.
//
// A worker with --max-running-requests 4 saturates near 9 requests/s at speed 1 (64-token answers at ~6.5 ms a
// decode step): ~36 at speed 4, ~72 for two or at speed 8, far below what the simulator's own CPU can serve on a 2-core
// CI machine. Steps are 6 s of arrivals at speed 1 (1.5 s at speed 4, 0.75 s at 8): short, for CI's budget; the backlog
// check fails a step whose server falls behind, so a short step cannot pass a rate the server only survives for a
// few seconds.
const search = (speed: number, workers = 1) =>
  ({
    // from 6.5 req/s a worker at speed 1 (it carries ~9, two behind round_robin ~10 each): the first doubling, 13, is
    // ~1.3-1.4 C and fails, where from 4 the search grew to 16 × speed (a clean-clone CI's client, alone on the
    // machine, fell behind twice at 128 req/s, a step past the capacity that only needed to fail, and ended the
    // search). The path scales with the speed, so the 2× holds
    min: 6.5 * speed * workers,
    max: 64 * speed * workers,
    precision: 0.05,
    stepDurationS: 6 / speed,
    repeats: 1,
    maxSteps: 14,
    // this suite holds C itself (again at C, and 1.25 C): no confirmation run of its own
    confirm: false,
  }) as const
const slo = (speed: number) => ({ ttft: { p90: 1000 / speed } })

test('capacity: ×2 from --speed 4 to 8 exactly, ~×2 with two workers behind round_robin; C holds at C and breaks at 1.25 C', async ({
  launchTopology,
  findCapacity,
  benchRequests,
}) => {
  const found: Record<string, number> = {}
  for (const [speed, workers] of [
    [4, 1],
    [8, 1],
    [4, 2],
  ] as const) {
    const name = `speed ${speed}, ${workers} worker${workers > 1 ? 's' : ''}`
    await using topo = await launchTopology(`capacity-s${speed}-w${workers}`, {
      workers,
      server,
      sim: { speed },
      ...(workers > 1 ? { router: { policy: 'round_robin' } } : {}),
    })
    const options = { ...workload, name, slo: slo(speed), search: search(speed, workers) }
    const result = await findCapacity(topo, options)
    expect(result.complete, result.ended).toBe(true)
    expect(result.capacity).toBeGreaterThan(0)
    found[name] = result.capacity
    if (speed === 4 && workers === 1) {
      const c = result.capacity
      const requests = result.steps.find((s) => s.rate === c)?.requests ?? Math.ceil(c * 1.5)
      const atC = await benchRequests(topo, { ...workload, name: `again at C = ${c} req/s`, rate: c, requests })
      const { objectives, search: resolved } = validateCapacityOptions(options)
      const judged = judgeStep([atC], objectives, { rampS: resolved.rampS, confidence: resolved.confidence })
      expect(overall(judged), JSON.stringify(judged)).not.toBe('fail')
      const above = await benchRequests(topo, {
        ...workload,
        name: `at 1.25 C = ${1.25 * c} req/s`,
        rate: 1.25 * c,
        requests: Math.ceil(1.25 * requests),
      })
      expect(above).not.toMeetSlo(slo(speed))
    }
  }
  const [one, fast, two] = Object.values(found) as [number, number, number]
  console.table([{ ...found, 'speed ratio': fast / one, 'workers ratio': two / one }])
  // the same system in half the time: 2× (within the search's precision, two brackets of 5 % each)
  expect(fast / one).toBeGreaterThan(2 * 0.9)
  expect(fast / one).toBeLessThan(2 * 1.1)
  // a little over 2× is what the model implies; 1.7× at the least within the searches' precision
  expect(two / one).toBeGreaterThan(1.7)
  expect(two / one).toBeLessThan(2.6)
})
