import { expect, test } from 'vitest'
import { SeededRandom } from '../common/seeded-random.ts'
import { judgeSeries } from './judge-series.ts'

// Issue 44: a regression fails the first run that carries it; noise alone does not. Series with a stated noise.

/** n runs of a latency at `level` with run-to-run noise `noise` (a fraction: lognormal, as latencies vary). */
const runs = (r: SeededRandom, n: number, level: number, noise: number): number[] =>
  Array.from({ length: n }, () => level * Math.exp(noise * r.normal()))

test('2 % noise: +8 % fails within 3 runs; 200 stationary checks raise fewer than 2 alarms', () => {
  const r = new SeededRandom(44)
  // 20 series that shift by +8 %: each is judged after every run from the first shifted one
  for (let s = 0; s < 20; s++) {
    const base = runs(r, 25, 10, 0.02)
    const shifted = runs(r, 3, 10.8, 0.02)
    const firstFail = [1, 2, 3].find(
      (k) => judgeSeries('tpot.p50', [...base, ...shifted.slice(0, k)]).verdict === 'regression',
    )
    expect(firstFail, `series ${s}`).toBeDefined()
  }
  // 200 checks of stationary series (each 20 runs, the newest judged)
  let alarms = 0
  for (let s = 0; s < 200; s++) if (judgeSeries('tpot.p50', runs(r, 20, 10, 0.02)).verdict === 'regression') alarms++
  expect(alarms).toBeLessThan(2)
})

test('a change under the minimum effect is no change, however real; a throughput falls the other way', () => {
  const r = new SeededRandom(7)
  // 0.9 % slower with 0.1 % noise: real, but it does not matter
  const small = [...runs(r, 20, 100, 0.001), ...runs(r, 3, 100.9, 0.001)]
  expect(judgeSeries('output_token_throughput', small).verdict).not.toBe('regression')
  expect(judgeSeries('tpot.p50', small).verdict).toBe('no change')
  expect(judgeSeries('tpot.p50', small, { minEffect: 0.005 }).verdict).toBe('regression')
  // throughput: lower is worse
  const drop = [...runs(r, 20, 1000, 0.02), 500]
  expect(judgeSeries('output_token_throughput', drop)).toMatchObject({
    verdict: 'regression',
    decisive: { index: 20, by: 'newest runs' },
  })
  expect(judgeSeries('ttft.p50', drop).verdict).toBe('improvement')
})

test('10,000 runs: the newest 1,000 are judged, and a change among them is placed in the whole series', () => {
  const r = new SeededRandom(11)
  // +20 % at run 9,701 (index 9,700) with 2 % noise; 300 runs since, so E-divisive places it, not the newest runs
  const values = [...runs(r, 9700, 10, 0.02), ...runs(r, 300, 12, 0.02)]
  const judged = judgeSeries('tpot.p50', values)
  expect(judged.window).toEqual({ from: 9000, runs: 1000, of: 10_000 })
  expect(judged.verdict).toBe('regression')
  expect(judged.decisive?.by).toBe('change point')
  expect(Math.abs((judged.decisive?.index as number) - 9700)).toBeLessThanOrEqual(2)
  // a newest run far off is judged as in a short series
  const spike = judgeSeries('tpot.p50', [...values, 30])
  expect(spike.decisive).toMatchObject({ index: 10_000, by: 'newest runs', kind: 'regression' })
})
