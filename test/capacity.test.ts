import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import type { BenchFn } from '../src/capacity/results.ts'
import { judgeStep } from '../src/capacity/step-verdict.ts'
import { benchRequests, findCapacity, LlmPerfError, sweep } from '../src/index.ts'
import { matchers } from '../src/matchers/matchers.ts'
import { normalizeSpec } from '../src/slo/slo-spec.ts'
import { syntheticRun } from '../src/slo/synthetic-run.ts'
import { withServer } from './helpers/fixture-server.ts'
import { startSimWorker } from './helpers/sim.ts'

expect.extend(matchers)
const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-capacity-'))
const workload = {
  arrival: 'constant' as const,
  tokenizer: 'words' as const,
  dataset: { kind: 'random' as const, inputLen: 8, outputLen: 2 },
  metricsIntervalMs: 0,
  // the client's limits with room: on a shared 2-core CI machine the rate-break search's first step (5 req/s) was
  // judged invalid on the client's pace; a few ms late moves no breaking point these tests read (33 req/s, p90 100 ms)
  validity: { maxDispatchLagMs: 50, maxEventLoopDelayMs: 100 },
}

test('the search brackets a stand-in server’s known breaking point (33 req/s) within 5 %, and says which objective broke', async () => {
  await withServer(
    'rate-break',
    async (url) => {
      const dir = outDir()
      const result = await findCapacity(
        { url },
        {
          ...workload,
          outDir: dir,
          slo: { client_ttft: { p90: 100 }, success_rate: { min: 0.99 } },
          search: { min: 5, max: 200, stepDurationS: 2, precision: 0.05, confirm: { durationS: 4 } },
        },
      )
      const [lo, hi] = result.bracket
      expect(lo).toBeLessThanOrEqual(33)
      expect(hi).toBeGreaterThan(33)
      expect(((hi as number) - lo) / lo).toBeLessThanOrEqual(0.05)
      expect(result.capacity).toBe(lo)
      expect(result.limitingObjective).toBe('client_ttft p90')
      // 50-odd requests a step cannot show a success rate ≥ 0.99 with 95 % confidence: the steps say so
      expect(result.decidedWithConfidence).toBe(false)
      // the steps judged: a step the client could not send at its pace (a busy machine) is invalid, and one too noisy
      // to decide is undecided; each judges nothing and is sent again (a clean-clone CI's step at 30 req/s was invalid
      // once, and its first step, at 5, undecided once)
      const judged = result.steps.filter((s) => s.decision !== 'invalid' && s.decision !== 'undecided')
      expect(judged.find((s) => s.rate === 30)?.objectives.map((o) => [o.objective, o.verdict, o.confident])).toEqual([
        ['client_ttft p90', 'pass', true],
        ['success_rate min', 'pass', false],
      ])
      expect(result.complete).toBe(true)
      // confirmed: 4 s at 0.9 × the capacity met the SLO, in its own folder, beside the steps
      expect(result.confirmation).toMatchObject({ phase: 'confirm', fraction: 0.9, holds: true, durationS: 4 })
      expect(existsSync(join(result.confirmation?.dir as string, 'summary.json'))).toBe(true)
      // grown by doubling from 5 until a failure, then bisected (on a quiet machine: 30 ✓, 35 ✗, 32.5 ✓, 33.75 ✗); an
      // invalid step sent again is a `repeat` (CI: grow 40 invalid, then repeat 40 ✗)
      expect(judged.slice(0, 4).map((s) => [s.rate, s.decision])).toEqual([
        [5, 'pass'],
        [10, 'pass'],
        [20, 'pass'],
        [40, 'fail'],
      ])
      expect(judged.slice(0, 4).every((s) => s.phase === 'grow' || s.phase === 'repeat')).toBe(true)
      expect(judged.slice(4).every((s) => s.phase === 'bisect' || s.phase === 'repeat')).toBe(true)
      // the slowest step is lengthened so p90 has its samples after the ramp; each step has its folder
      expect(result.steps[0]?.durationS).toBeGreaterThan(2)
      for (const s of result.steps) expect(existsSync(join(s.dir, 'requests.csv'))).toBe(true)
      const json = JSON.parse(readFileSync(join(dir, 'capacity.json'), 'utf8'))
      expect(json.capacity).toBe(result.capacity)
      // every step, a repeated one too (a busy machine can make a step unconfident, and the search repeats it)
      expect(json.steps).toHaveLength(result.steps.length)
      const html = readFileSync(join(dir, 'capacity.html'), 'utf8')
      expect(html).toContain('<svg')
      expect(html).toContain('client_ttft p90 against offered load')
      // a point that did not pass is hollow, as the legend says: its objective's or its step's verdict, in every
      // objective's chart (40 req/s broke client_ttft while its success rate held: its success-rate point was drawn
      // filled). Counted point by point: a step whose client_ttft read nothing draws only its success rate, and once
      // on CI a hollow point more was drawn than the steps' count (11 for 10) by counting two per step
      const drawn = result.steps.flatMap((s) =>
        s.objectives.filter((o) => o.observed !== null).map((o) => o.verdict !== 'pass' || s.decision !== 'pass'),
      )
      expect(drawn.filter(Boolean).length).toBeGreaterThanOrEqual(2)
      expect(html.match(/<circle [^>]*fill="#fff"/gu)?.length ?? 0).toBe(drawn.filter(Boolean).length)
      expect(html.match(/<circle /gu)?.length ?? 0).toBe(drawn.length)
      // the matcher: passes at the capacity, fails above it with the curve and the worst requests
      expect(result).toSustain({ rate: 30 })
      let message = ''
      try {
        expect(result).toSustain({ rate: 40 })
      } catch (err) {
        message = (err as Error).message
      }
      expect(message).toMatch(/✗ sustains 40 req\/s: capacity 3\d\.\d\d req\/s/u)
      expect(message).toMatch(/limiting objective: client_ttft p90/u)
      expect(message).toMatch(/worst 5 by client_ttft/u)
      // and against a baseline capacity: written once outside CI, then compared
      const baseline = join(dir, 'baseline', 'capacity.json')
      const ci = process.env.CI
      delete process.env.CI
      try {
        expect(result).toSustain({ compareTo: baseline })
        expect(JSON.parse(readFileSync(baseline, 'utf8')).capacity).toBe(result.capacity)
        expect(result).toSustain({ compareTo: baseline, regression: 5 })
        expect({ ...result, capacity: result.capacity * 0.85 }).not.toSustain({ compareTo: baseline, regression: 10 })
      } finally {
        if (ci !== undefined) process.env.CI = ci
      }
    },
    ['33'],
  )
}, 120_000)

// the confirmation's first `tries` tries judged against a dispatch lag no client meets: a busy machine, injected
const busyConfirmations = (tries: number): BenchFn => {
  let seen = 0
  return (target, options) =>
    benchRequests(
      target,
      String(options.name).includes('confirmation') && ++seen <= tries
        ? { ...options, validity: { ...options.validity, maxDispatchLagMs: 1e-6 } }
        : options,
    )
}

test.each([
  [1, true],
  [2, null],
])(
  'a confirmation the client could not send at its pace is sent again: busy %i time(s), it holds: %s',
  async (tries, held) => {
    await withServer(
      'rate-break',
      async (url) => {
        const dir = outDir()
        const result = await findCapacity(
          { url },
          {
            ...workload,
            outDir: dir,
            slo: { client_ttft: { p90: 100 } },
            search: { min: 20, max: 40, stepDurationS: 2, precision: 0.5, confirm: { durationS: 2 } },
          },
          busyConfirmations(tries),
        )
        expect(result.capacity).toBe(30)
        const c = result.confirmation
        expect(c?.invalidBefore?.reason).toMatch(/the load generator fell behind/u)
        expect(existsSync(join(c?.invalidBefore?.dir as string, 'summary.json'))).toBe(true)
        expect(c?.dir).toBe(join(dir, 'confirm-2-27.00rps'))
        expect(c?.holds).toBe(held)
        expect(c?.decision).toBe(held === null ? 'invalid' : 'pass')
        const html = readFileSync(join(dir, 'capacity.html'), 'utf8')
        expect(html).toContain(held === null ? 'could not be judged, twice' : 'met the SLO')
        expect(html).toContain('sent again: the first try could not be judged')
      },
      ['33'],
    )
  },
  60_000,
)

test('a step is judged by its interval: clearly under passes, clearly over fails, straddling is undecided', () => {
  const [p90] = normalizeSpec({ client_ttft: { p90: 100 } })
  const spec = normalizeSpec({ ttft: { p90: 100 } })
  const run = (ms: (i: number) => number) =>
    syntheticRun(Array.from({ length: 400 }, (_, i) => ({ ttftS: ms(i) / 1000 })))
  const judge = (ms: (i: number) => number) => judgeStep([run(ms)], spec, { rampS: 0, confidence: 0.95 })[0]
  expect(p90).toBeDefined()
  expect(judge((i) => 50 + (i % 10))?.verdict).toBe('pass')
  expect(judge((i) => 150 + (i % 10))?.verdict).toBe('fail')
  // p90 sits right at the limit: values spread evenly over 0…111 ms
  const straddle = judge((i) => (((i * 37) % 400) / 400) * 111.1)
  expect(straddle?.verdict).toBe('undecided')
  expect(straddle?.lower).toBeLessThanOrEqual(100)
  expect(straddle?.upper).toBeGreaterThan(100)
  // the ramp's rows are left out: the first second is slow, the rest fast (request i arrives at i·10 ms)
  const ramped = judgeStep([run((i) => (i < 100 ? 900 : 20))], spec, { rampS: 1, confidence: 0.95 })[0]
  expect(ramped?.samples).toBe(300)
  expect(ramped?.verdict).toBe('pass')
  // a fraction is judged on its point estimate, and is confident only when its interval clears the limit
  const rates = normalizeSpec({ success_rate: { min: 0.99 } })
  const allOk = judgeStep([run(() => 10)], rates, { rampS: 0, confidence: 0.95 })[0]
  expect([allOk?.verdict, allOk?.confident]).toEqual(['pass', true])
  const fewOk = judgeStep([syntheticRun(Array.from({ length: 50 }, () => ({ ttftS: 0.01 })))], rates, {
    rampS: 0,
    confidence: 0.95,
  })[0]
  expect([fewOk?.verdict, fewOk?.confident]).toEqual(['pass', false])
})

test('bad search options are one error naming each, before any request', async () => {
  const err = await findCapacity(
    { url: 'http://127.0.0.1:9' },
    // @ts-expect-error rate is the search's to set
    { rate: 5, slo: { ttft: { p99: 'fast' } }, search: { min: 10, max: 5, precision: 2, stepDurationS: -1 } },
  ).then(
    () => undefined,
    (e: unknown) => e as Error,
  )
  expect(err).toBeInstanceOf(LlmPerfError)
  for (const part of ['`rate`', '`search.precision`', '`search.stepDurationS`', '`slo`: ttft.p99'])
    expect(err?.message).toContain(part)
})

test('a rate sweep and a concurrency sweep against the simulator: a folder per point, sweep.json and sweep.html', async () => {
  const worker = await startSimWorker(['--speed', '4'], 'sweep')
  try {
    const dir = outDir()
    const rates = await sweep(
      { url: worker.url },
      { rates: [5, 20], durationS: 2 },
      {
        dataset: { kind: 'random', inputLen: 32, outputLen: 16 },
        outDir: join(dir, 'rates'),
        slo: { ttft: { p99: 2000 } },
      },
    )
    expect(rates.points.map((p) => [p.mode, p.offered, p.requests])).toEqual([
      ['rate', 5, 10],
      ['rate', 20, 40],
    ])
    for (const p of rates.points) {
      expect(p.successRate).toBe(1)
      expect(p.ttft.p99).toBeGreaterThan(0)
      expect(p.tpot.p50).toBeGreaterThan(0)
      expect(p.outputTokensPerUser).toBeCloseTo(1000 / (p.tpot.p50 as number), 6)
      expect(p.goodput?.fraction).toBe(1)
      expect(existsSync(join(p.dir, 'report.html'))).toBe(true)
    }
    // more offered load, more output tokens per second
    expect(rates.points[1]?.outputTokenThroughput).toBeGreaterThan(rates.points[0]?.outputTokenThroughput as number)
    expect(JSON.parse(readFileSync(rates.files.json, 'utf8')).points).toHaveLength(2)
    expect(readFileSync(rates.files.html, 'utf8')).toContain('Pareto front')
    const closed = await sweep(
      { url: worker.url },
      { concurrencies: [1, 4] },
      {
        requests: 12,
        dataset: { kind: 'random', inputLen: 32, outputLen: 16 },
        outDir: join(dir, 'concurrency'),
      },
    )
    const [one, four] = closed.points
    expect(one?.mode).toBe('concurrency')
    // latency from the send: one in flight waits for nobody, so its TTFT is the server's own, not the queue
    expect(one?.ttft.p99).toBeLessThan(four?.e2e.p99 as number)
    expect(four?.requestThroughput).toBeGreaterThan(one?.requestThroughput as number)
  } finally {
    await worker.stop()
  }
}, 60_000)
