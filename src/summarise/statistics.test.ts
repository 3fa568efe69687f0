import { expect, test } from 'vitest'
import { SeededRandom } from '../common/seeded-random.ts'
import {
  bootstrapInterval,
  bootstrapSpread,
  percentileDifference,
  percentileName,
  percentileResampler,
  percentileSorted,
  wilson,
} from './statistics.ts'

// Expected values are numpy.percentile's (linear interpolation, the default).
test.each([
  [[1, 2, 3, 4], 50, 2.5],
  [[1, 2, 3, 4], 90, 3.7],
  [[1, 2, 3, 4], 99, 3.97],
  [[15, 20, 35, 40, 50], 40, 29],
  [[15, 20, 35, 40, 50], 0, 15],
  [[15, 20, 35, 40, 50], 100, 50],
  [[7], 99, 7],
  [Array.from({ length: 100 }, (_, i) => i + 1), 99, 99.01],
  [Array.from({ length: 1000 }, (_, i) => i), 99.9, 998.001],
])('percentile(%j, %s) = %s', (values, p, expected) => {
  expect(percentileSorted(values, p)).toBeCloseTo(expected, 9)
})

test('no values: NaN, never a made-up number', () => {
  expect(percentileSorted([], 50)).toBeNaN()
})

test('bootstrap spread of a percentile: zero for constant samples, positive otherwise, the same each time', () => {
  expect(bootstrapSpread(Array(100).fill(5), 99)).toBe(0)
  const values = Array.from({ length: 200 }, (_, i) => i)
  expect(bootstrapSpread(values, 99)).toBeGreaterThan(0)
  expect(bootstrapSpread(values, 99)).toBe(bootstrapSpread(values, 99))
})

test("a large run's resampled percentile drawn directly spreads as resampling every value does", () => {
  // exponential latencies, 12,000 of them (above LARGE_SAMPLE): p50 and p99 resampled 400 times each way
  const random = new SeededRandom(5)
  const values = Float64Array.from({ length: 12_000 }, () => random.exponential(100)).sort()
  for (const p of [50, 99]) {
    const spread = (direct: boolean): number => {
      const draw = percentileResampler(values, p, direct)
      const r = new SeededRandom(1)
      const draws = Array.from({ length: 400 }, () => draw(r))
      const mean = draws.reduce((a, b) => a + b, 0) / draws.length
      return Math.sqrt(draws.reduce((a, b) => a + (b - mean) ** 2, 0) / draws.length)
    }
    const exact = spread(false)
    expect(exact).toBeGreaterThan(0)
    // 400 rounds estimate a spread within ~±7 % (1/√(2·400) ≈ 3.5 % a standard error, each way)
    expect(Math.abs(spread(true) / exact - 1), `p${p}`).toBeLessThan(0.15)
  }
})

test('intervals: a percentile within its own interval, a change of 0 within the interval of a run against itself', () => {
  const values = Float64Array.from({ length: 300 }, (_, i) => ((i * 37) % 300) + 1).sort()
  const [lo, hi] = bootstrapInterval(values, 90, 0.95)
  expect(lo).toBeLessThanOrEqual(percentileSorted(values, 90))
  expect(hi).toBeGreaterThanOrEqual(percentileSorted(values, 90))
  const same = percentileDifference(values, values, 90)
  expect(same.lower).toBeLessThan(0)
  expect(same.upper).toBeGreaterThan(0)
  const slower = percentileDifference(
    values,
    values.map((v) => v * 1.5),
    90,
  )
  expect(slower.lower).toBeGreaterThan(0)
})

test('percentiles by name: p99 and p999 as specs write them, others in k6 form', () => {
  expect([50, 90, 95, 99, 99.9, 97.5].map(percentileName)).toEqual(['p50', 'p90', 'p95', 'p99', 'p999', 'p(97.5)'])
})

test("Wilson's interval holds the observed fraction, and is honest at 0 and 1", () => {
  const [lo, hi] = wilson(99, 100, 0.95)
  expect(lo).toBeCloseTo(0.9455, 3)
  expect(hi).toBeCloseTo(0.9982, 3)
  expect(wilson(0, 10, 0.95)[0]).toBe(0)
  expect(wilson(10, 10, 0.95)[1]).toBe(1)
  expect(wilson(0, 0, 0.95)).toEqual([0, 1])
})
