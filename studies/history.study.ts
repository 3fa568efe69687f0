import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'

// Performance history in a perf suite: each run is recorded (`history`) and gated against the runs of its workload
// before it (`toNotRegress`). A worker at --speed 4 eight times, then one at 3.4 (0.85 ×): the first eight pass, and
// the slower runs are a regression of tpot as soon as they are enough to be told from noise. A history of its own,
// in a temporary file: a study must not read another run's.
const workload = {
  rate: 100,
  requests: 24,
  seed: 7,
  dataset: { kind: 'random', inputLen: 64, outputLen: 16 },
  metricsIntervalMs: 0,
} as const

test('history: runs recorded and gated by toNotRegress; a 15 % slower server is a regression of tpot', async ({
  launchTopology,
  benchRequests,
}) => {
  const history = { db: join(mkdtempSync(join(tmpdir(), 'llm-perf-history-')), 'history.sqlite') }
  {
    await using fast = await launchTopology('history-fast', { workers: 1, sim: { speed: 4 } })
    for (let i = 0; i < 8; i++) {
      const run = await benchRequests(fast, { ...workload, name: `speed 4, run ${i + 1}`, history })
      expect(run).toNotRegress({ metrics: ['tpot.p50'], db: history.db })
    }
  }
  await using slow = await launchTopology('history-slow', { workers: 1, sim: { speed: 3.4 } })
  let caught = ''
  // up to six slower runs: one fast run on a busy machine (TPOT p50 2.5 ms among 1.9–2.2, a CI run) widens the
  // history enough that four slower runs at 2.4–2.5 were not yet told from noise; the gate needs the evidence, and
  // the change it then reports is still where the slower server began
  for (let i = 0; i < 6 && caught === ''; i++) {
    const run = await benchRequests(slow, { ...workload, name: `speed 3.4, run ${i + 1}`, history })
    try {
      expect(run).toNotRegress({ metrics: ['tpot.p50'], db: history.db })
    } catch (err) {
      caught = (err as Error).message
    }
  }
  // the change is where the slower server began, run 9, give or take one: a busy machine can make the run before it
  // slow too (a CI run found it at run 8: 2.039 → 2.368 ms, the fast runs 5–7 before it, p = 0.004), as the history
  // test allows the change at run 31 ± 2
  expect(caught).toMatch(
    /✗ tpot\.p50 regressed at run (8|9|10) of \d+ .*: [\d.]+ → [\d.]+ \(\+\d+\.\d %, 95 % interval/u,
  )
})
