import { stripVTControlCharacters } from 'node:util'
import { expect, test } from 'vitest'
import { invalidRun } from '../slo/evaluate-slo.ts'
import { syntheticRun } from '../slo/synthetic-run.ts'
import { matchers } from './matchers.ts'

expect.extend(matchers)

/** The assertion's message, colours stripped. */
function failure(assertion: () => void): string {
  try {
    assertion()
  } catch (err) {
    return stripVTControlCharacters((err as Error).message)
  }
  throw new Error('expected the assertion to fail')
}

// ttft 1 … 100 ms over 100 successful requests: numpy gives p50 50.5, p99 99.01
const hundred = syntheticRun(Array.from({ length: 100 }, (_, i) => ({ ttftS: (i + 1) / 1000, queueS: (i + 1) / 2000 })))

test('a pass is silent; .not on a passing run fails and says every objective held', () => {
  expect(hundred).toMeetSlo({ ttft: { p99: 100 }, success_rate: { min: 0.99 } })
  expect(failure(() => expect(hundred).not.toMeetSlo({ ttft: { p99: 101 } }))).toBe(
    [
      'expect(run).not.toMeetSlo(slo)',
      '',
      'Expected the run to miss its SLO, but all 1 objectives held',
      '  ✓ ttft p99: ttft p99 = 99.0 ms, limit <= 101.0 ms',
      '  goodput 1.0000 (89.29 req/s) · success_rate 1.0000 · 100 requests',
      'CSV: /runs/x/requests.csv',
    ].join('\n'),
  )
})

test('a breach names the metric, p99, limit, miss, distribution, five worst requests and the CSV', () => {
  expect(failure(() => expect(hundred).toMeetSlo({ ttft: { p99: 50 }, pure_queue_time: ['p(99)<80'] }))).toBe(
    [
      'expect(run).toMeetSlo(slo)',
      '',
      'SLO not met: 1 of 2 objectives not met',
      '  ✗ ttft p99: ttft p99 = 99.0 ms, limit <= 50.0 ms (over by 98.0%)',
      '      n=100 · p50 50.5 ms · p90 90.1 ms · p99 99.0 ms · max 100.0 ms',
      '      worst 5 by ttft:',
      '        req_id  ttft        router_q   tokenize   queue      prefill    network    host',
      '        r-99    100.0 ms    0.0 ms     1.0 ms     50.0 ms    48.0 ms    1.0 ms     http://127.0.0.1:30001',
      '        r-98    99.0 ms     0.0 ms     1.0 ms     49.5 ms    47.5 ms    1.0 ms     http://127.0.0.1:30001',
      '        r-97    98.0 ms     0.0 ms     1.0 ms     49.0 ms    47.0 ms    1.0 ms     http://127.0.0.1:30001',
      '        r-96    97.0 ms     0.0 ms     1.0 ms     48.5 ms    46.5 ms    1.0 ms     http://127.0.0.1:30001',
      '        r-95    96.0 ms     0.0 ms     1.0 ms     48.0 ms    46.0 ms    1.0 ms     http://127.0.0.1:30001',
      "  ✓ pure_queue_time 'p(99)<80': pure_queue_time p99 = 49.5 ms, limit < 80.0 ms",
      // r-49's ttft is (0.49 + 0.05) − 0.49 = 0.05000000000000002 s in doubles, just over the limit, as numpy would
      // find it too
      '  goodput 0.5000 (44.64 req/s) · success_rate 1.0000 · 100 requests',
      'CSV: /runs/x/requests.csv',
    ].join('\n'),
  )
})

test('.not on a failing run passes', () => {
  expect(hundred).not.toMeetSlo({ ttft: { p99: 50 } })
  expect(hundred).not.toHaveP99TtftBelow(50)
  expect(hundred).toHaveP99TtftBelow(100)
  expect(hundred).toHavePercentileBelow('pure_queue_time', 50, 26)
})

test('too few samples for a percentile fails, with .not too, and says how many it needs', () => {
  const forty = syntheticRun(Array.from({ length: 40 }, () => ({ ttftS: 0.01 })))
  for (const assertion of [
    () => expect(forty).toMeetSlo({ ttft: { p99: 500 } }),
    () => expect(forty).not.toMeetSlo({ ttft: { p99: 500 } }),
  ]) {
    expect(failure(assertion)).toContain(
      '  ! ttft p99: p99 needs at least 100 successful samples to mean anything, got 40 (set minSamples to override)',
    )
  }
  expect(forty).toMeetSlo({ ttft: { p99: 500, minSamples: 40 } })
})

test('a metric the server did not report fails with the reason, never passing on empty data', () => {
  const noTimings = syntheticRun(Array.from({ length: 100 }, () => ({})))
  const message = failure(() => expect(noTimings).not.toMeetSlo({ pure_queue_time: { p99: 50 } }))
  expect(message).toContain(
    '  ! pure_queue_time p99: not reported: the server reported no timestamps for pure_queue_time ' +
      "(server timestamps seen: none: 100). It needs SGLang's native /generate (api: 'generate') " +
      'with --enable-metrics, v0.5.5 or later; /v1/* responses carry no timings.',
  )
  expect(failure(() => expect(noTimings).toHaveP99TtftBelow(500))).toContain(
    'client_ttft, measured by the client alone, is always available.',
  )
})

test('a run whose load generator fell behind is invalid, neither passed nor failed', () => {
  const late = syntheticRun(
    Array.from({ length: 100 }, () => ({ ttftS: 0.01 })),
    { lagP99Ms: 80 },
  )
  for (const assertion of [
    () => expect(late).toMeetSlo({ ttft: { p99: 500 } }),
    () => expect(late).not.toMeetSlo({ ttft: { p99: 500 } }),
  ]) {
    expect(failure(assertion)).toContain(
      'Invalid run: the load generator fell behind: dispatch lag p99 80.0 ms > 25 ms (maxDispatchLagMs) with 1 ' +
        "load thread; spread the load over more cores with benchRequests' `processes` (a number, or 'auto'), or " +
        'over hosts with `shard`. It says nothing about the server',
    )
  }
  expect(late).toMeetSlo({ ttft: { p99: 500 } }, { maxDispatchLagMs: 100 })
})

test("a run's own limits (benchRequests' validity, as summary.json records them) judge it; toMeetSlo's own win", () => {
  const late = syntheticRun(
    Array.from({ length: 100 }, () => ({ ttftS: 0.01 })),
    { lagP99Ms: 80 },
  )
  late.summary.options = { validity: { maxDispatchLagMs: 'Infinity' } }
  expect(invalidRun(late.summary)).toBeUndefined()
  expect(late).toMeetSlo({ ttft: { p99: 500 } })
  expect(failure(() => expect(late).toMeetSlo({ ttft: { p99: 500 } }, { maxDispatchLagMs: 50 }))).toContain(
    'dispatch lag p99 80.0 ms > 50 ms (maxDispatchLagMs)',
  )
  late.summary.options = { validity: { maxDispatchLagMs: 60 } }
  expect(invalidRun(late.summary)).toContain('dispatch lag p99 80.0 ms > 60 ms')
})

test('a run whose load generator could not read the responses in time is invalid too (the receive side)', () => {
  const rows = Array.from({ length: 100 }, () => ({ ttftS: 0.01 }))
  const saturated = syntheticRun(rows, { receiveBusy: 0.97 })
  expect(failure(() => expect(saturated).toMeetSlo({ ttft: { p99: 500 } }))).toContain(
    'Invalid run: the load generator could not read the responses as fast as they came: its busiest thread ' +
      'worked 97 % of the run (waits for arrivals excluded) > 90 % (maxReceiveBusy) with 1 load thread',
  )
  expect(saturated).toMeetSlo({ ttft: { p99: 500 } }, { maxReceiveBusy: 0.99 })
  expect(syntheticRun(rows, { receiveBusy: 0.5 })).toMeetSlo({ ttft: { p99: 500 } })
})

test('success_rate and goodput: failed requests count against both', () => {
  const rows = Array.from({ length: 100 }, (_, i) => ({ ttftS: i < 90 ? 0.01 : 0.5, ok: i % 10 !== 0 }))
  const run = syntheticRun(rows)
  // the per-request limit is ttft ≤ 100 ms: 81 requests succeed within it (ten failed, nine were slow)
  expect(run).toMeetSlo({ success_rate: { min: 0.9 }, goodput: { min: 0.8 }, ttft: { p50: 100 } })
  expect(failure(() => expect(run).toMeetSlo({ goodput: { min: 0.85 }, ttft: { p50: 100 } }))).toContain(
    '  ✗ goodput: goodput = 0.8100, limit >= 0.8500 (under by 4.7%)',
  )
})

test('misuse is a TypeError naming what was expected', () => {
  expect(() => expect({ nope: 1 }).toMeetSlo({ ttft: { p99: 1 } })).toThrow(
    'toMeetSlo: expected the BenchRun that benchRequests() resolves to, got object',
  )
})

test('an objective that cannot be judged is said so in the end-of-run table, not left as —', () => {
  const row = { csv: hundred.files.csv, slo: [] as unknown[] }
  const state = { isNot: false, utils: { matcherHint: () => 'hint' }, task: { meta: { llmPerf: [row] } } }
  expect(() =>
    matchers.toMeetSlo.call(state as never, hundred, { ttft: { p999: 100 }, success_rate: { min: 0.99 } }),
  ).toThrow(/SLO cannot be judged/u)
  expect(row.slo).toEqual([
    { status: 'unjudgeable', label: 'ttft p999: 100 samples' },
    { status: 'pass', label: 'success_rate' },
  ])
})
